import { appendFileSync, mkdirSync, type WriteStream } from "node:fs";
import { dirname, join } from "node:path";
import { freePort, PACKAGE_ROOT, PipelineError, startLogged, stopChild, type RunningCommand } from "./processes.ts";

/**
 * A stage is a list of steps, and a step is data: the dry run prints each one and the run executes the same
 * object, so what `--dry-run` shows is what runs. toolgym's own steps run through the `ToolgymRunner` the caller
 * gives (the CLI gives its main(), in this process), recipes as their Python command; a server step starts a
 * server on a free port, runs the steps inside it with the port filled in, and stops it.
 */
export type Step =
  /** `toolgym ARGS`: the toolgym CLI. */
  | { kind: "toolgym"; args: string[]; note: string }
  /**
   * An external command (a Python recipe). `onLine` sees each line of its output (and may post a progress note);
   * when it returns a reason, the command is stopped and the step fails with `stopCode` and that reason.
   */
  | { kind: "command"; argv: string[]; note: string; onLine?: (line: string, note: (text: string) => void) => string | undefined; stopCode?: string }
  /** Work done in-process that starts nothing (writing the suite file, rendering the card), shown as a comment. */
  | { kind: "library"; note: string; run: () => void | Promise<void> }
  /**
   * A server started in the background on a free port (`toolgym`: argv is the CLI's arguments): `placeholder`
   * (e.g. PORT) stands for the port in its argv and in the inner steps; it is up once `probe` (a path on it)
   * answers 200, and is stopped after them.
   */
  | { kind: "server"; argv: string[]; toolgym?: boolean; placeholder: string; probe: string; note: string; steps: Step[] };

const quote = (value: string) => (/^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`);
export const shell = (argv: readonly string[]) => argv.map(quote).join(" ");

/** The shell lines of steps, in order (a server as `COMMAND &` … `kill %1`). */
export function renderSteps(steps: readonly Step[]): string[] {
  return steps.flatMap((step): string[] => {
    if (step.kind === "toolgym") return [shell(["toolgym", ...step.args])];
    if (step.kind === "command") return [shell(step.argv)];
    if (step.kind === "library") return [`# ${step.note}`];
    return [`${shell(step.toolgym ? ["toolgym", ...step.argv] : step.argv)} &`, ...renderSteps(step.steps), "kill %1"];
  });
}

/** The step with `placeholder` replaced by `value` wherever it stands for the port (`--port PORT`, `…:PORT/…`). */
function fillPort<S extends Step>(step: S, placeholder: string, value: number): S {
  const pattern = new RegExp(`:${placeholder}(?=/|$)`, "g");
  const fill = (text: string) => (text === placeholder ? String(value) : text.replace(pattern, `:${value}`));
  if (step.kind === "toolgym") return { ...step, args: step.args.map(fill) };
  if (step.kind === "command") return { ...step, argv: step.argv.map(fill) };
  if (step.kind === "server") return { ...step, argv: step.argv.map(fill), steps: step.steps.map((inner) => fillPort(inner, placeholder, value)) };
  return step;
}

/** Where a `toolgym` step writes: the stage log, as both of its streams, and the pipeline's interrupt. */
export interface StepIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  interrupts?(): AbortSignal;
}

/**
 * Runs `toolgym ARGS` and returns its exit code. The pipeline is a library below the CLI and never imports it:
 * whoever runs the pipeline passes the runner (the CLI passes its own main(), so a step behaves exactly as the
 * command line it prints).
 */
export type ToolgymRunner = (args: string[], io: StepIo) => Promise<number>;

export interface StepContext {
  log: WriteStream;
  /** Runs the `toolgym` steps. */
  toolgym: ToolgymRunner;
  /** Where each executed command line is appended (the record a test compares with the dry run). */
  record: string;
  note(text: string): void;
  signal?: AbortSignal;
}

const TOOLGYM_BIN = join(PACKAGE_ROOT, "bin/toolgym.js");

/**
 * `toolgym ARGS` through the context's runner (the CLI's main() in this process), its output in the stage log,
 * failing as the command would exit. A stage has up to a few dozen such steps (an evaluation per model, curve point and sampled row),
 * and a new process for each would start node and load the CLI again: about 2 s of CPU each.
 */
async function runToolgym(args: readonly string[], context: StepContext): Promise<void> {
  appendFileSync(context.record, `${shell(["toolgym", ...args])}\n`);
  context.log.write(`$ toolgym ${args.join(" ")}\n`);
  let tail = "";
  const output = {
    write(text: string) {
      context.log.write(text);
      tail = (tail + text).slice(-1500);
      return true;
    },
  };
  const signal = context.signal;
  const code = await context.toolgym([...args], { stdout: output, stderr: output, ...(signal ? { interrupts: () => signal } : {}) });
  if (code === 0) return;
  const last = tail.trim().split("\n").slice(-3).join(" / ");
  throw new PipelineError({ code: "COMMAND_FAILED", message: `\`toolgym ${args.join(" ")}\` exited with ${code}; last output: ${last}` });
}

async function runCommand(
  argv: readonly string[],
  shown: readonly string[],
  context: StepContext,
  watch?: Pick<Extract<Step, { kind: "command" }>, "onLine" | "stopCode">,
) {
  appendFileSync(context.record, `${shell(shown)}\n`);
  let stopped: string | undefined;
  const onLine = watch?.onLine;
  const running: RunningCommand = startLogged(
    argv,
    context.log,
    onLine
      ? {
          onLine: (line) => {
            const reason = onLine(line, context.note);
            if (reason && !stopped) {
              stopped = reason;
              void stopChild(running.child);
            }
          },
        }
      : {},
  );
  const abort = () => void stopChild(running.child);
  context.signal?.addEventListener("abort", abort, { once: true });
  try {
    await running.done.catch((error: unknown) => {
      if (!stopped) throw error;
    });
  } finally {
    context.signal?.removeEventListener("abort", abort);
  }
  if (stopped) throw new PipelineError({ code: watch?.stopCode ?? "COMMAND_STOPPED", message: stopped });
}

async function waitForServer(url: string, running: RunningCommand, deadline: number): Promise<void> {
  let failure: unknown;
  running.done.catch((error: unknown) => (failure = error));
  for (;;) {
    if (failure) throw new PipelineError({ code: "SERVER_FAILED", message: `a server did not start: ${(failure as Error).message}` });
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new PipelineError({ code: "SERVER_TIMEOUT", message: `no answer from ${url} in time; see the stage log` });
    await new Promise((wait) => setTimeout(wait, 500));
  }
}

/** Executes steps in order; a failing command rejects with its PipelineError, and servers are stopped either way. */
export async function runSteps(steps: readonly Step[], context: StepContext): Promise<void> {
  mkdirSync(dirname(context.record), { recursive: true });
  for (const step of steps) {
    if (context.signal?.aborted) throw new PipelineError({ code: "INTERRUPTED", message: "the pipeline was interrupted" });
    context.note(step.note);
    if (step.kind === "toolgym") await runToolgym(step.args, context);
    else if (step.kind === "command") await runCommand(step.argv, step.argv, context, step);
    else if (step.kind === "library") await step.run();
    else {
      const port = await freePort();
      const server = fillPort(step, step.placeholder, port);
      appendFileSync(context.record, `${shell(server.toolgym ? ["toolgym", ...server.argv] : server.argv)} &\n`);
      const running = startLogged(server.toolgym ? [process.execPath, TOOLGYM_BIN, ...server.argv] : server.argv, context.log);
      try {
        await waitForServer(`http://127.0.0.1:${port}${step.probe}`, running, Date.now() + 600_000);
        await runSteps(server.steps, context);
      } finally {
        await stopChild(running.child);
        appendFileSync(context.record, "kill %1\n");
      }
    }
  }
}
