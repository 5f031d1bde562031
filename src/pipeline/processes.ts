import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, type WriteStream } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { ToolgymError } from "../core/index.ts";

/** The repository (or installed package) root: python/, scripts/ and bin/ live here. */
export const PACKAGE_ROOT = resolve(import.meta.dirname, "../..");

/** Failures of the pipeline's own steps (a recipe that exits non-zero, a server that never comes up). */
export class PipelineError extends ToolgymError {
  constructor(options: { code: string; message: string; cause?: unknown }) {
    super({ code: options.code, message: options.message, boundary: "harness", cause: options.cause });
  }
}

/** The Python with torch/transformers/trl: TOOLGYM_PYTHON, else the project's .venv, else `python3` on PATH. */
export function resolvePython(): string {
  if (process.env.TOOLGYM_PYTHON) return process.env.TOOLGYM_PYTHON;
  const venv = join(PACKAGE_ROOT, ".venv/bin/python");
  return existsSync(venv) ? venv : "python3";
}

/** Environment for child processes: quiet tokenizers, a thread count that leaves the event loop room, TRL's experimental notice off. */
export function childEnvironment(): NodeJS.ProcessEnv {
  return { ...process.env, PYTHONDONTWRITEBYTECODE: "1", TOKENIZERS_PARALLELISM: "false", TRL_EXPERIMENTAL_SILENCE: "1", PYTHONUNBUFFERED: "1" };
}

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

/** A log file every step of a stage appends to. */
export function openLog(path: string): WriteStream {
  return createWriteStream(path, { flags: "a" });
}

export interface RunningCommand {
  child: ChildProcess;
  done: Promise<void>;
}

/**
 * Starts a command with its output appended to `log` (and each line passed to `onLine`); `done` rejects
 * with a PipelineError naming the command and the log when it exits non-zero.
 */
export function startLogged(argv: readonly string[], log: WriteStream, options: { onLine?: (line: string) => void; cwd?: string } = {}): RunningCommand {
  const [command, ...args] = argv as [string, ...string[]];
  log.write(`$ ${argv.join(" ")}\n`);
  const child = spawn(command, args, { cwd: options.cwd ?? PACKAGE_ROOT, env: childEnvironment(), stdio: ["ignore", "pipe", "pipe"] });
  let partial = "";
  let tail = "";
  const take = (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    log.write(text);
    tail = (tail + text).slice(-1500);
    if (!options.onLine) return;
    const lines = (partial + text).split(/\r?\n|\r/);
    partial = lines.pop() ?? "";
    for (const line of lines) options.onLine(line);
  };
  child.stdout?.on("data", take);
  child.stderr?.on("data", take);
  const done = new Promise<void>((resolveDone, reject) => {
    child.once("error", (error) =>
      reject(new PipelineError({ code: "COMMAND_NOT_FOUND", message: `cannot run '${command}' (${error.message}); is it installed?`, cause: error })),
    );
    child.once("close", (code, signal) => {
      if (code === 0) return resolveDone();
      const why = signal ? `was stopped by ${signal}` : `exited with ${code}`;
      reject(
        new PipelineError({ code: "COMMAND_FAILED", message: `\`${argv.join(" ")}\` ${why}; last output: ${tail.trim().split("\n").slice(-3).join(" / ")}` }),
      );
    });
  });
  return { child, done };
}

/** Stops a child politely, then firmly. */
export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once("exit", done));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

export interface ModelServer {
  /** OpenAI-compatible base URL (…/v1). */
  baseUrl: string;
  stop(): Promise<void>;
}

/**
 * The command that serves a model directory or hub id: `vllm serve`, or `transformers serve` on CPU through
 * python/serve_transformers.py, which returns a malformed tool call as text (as vLLM and TRL do) instead of
 * answering HTTP 500, so both engines score it as the model's failure. With `model` undefined (transformers
 * only) no model is pinned: the server loads each request's `model` (a directory or hub id) on first use and
 * keeps it until it has been idle for transformers' --model-timeout, so one process serves several models.
 */
export function modelServerCommand(
  engine: "transformers" | "vllm",
  python: string,
  model: string | undefined,
  port: number | string,
  extra: readonly string[],
): string[] {
  const address = ["--host", "127.0.0.1", "--port", String(port)];
  if (engine === "transformers") {
    const pinned = model === undefined ? [] : [model];
    return [python, join(PACKAGE_ROOT, "python/serve_transformers.py"), ...pinned, ...address, "--device", "cpu", "--default-seed", "0", ...extra];
  }
  // vLLM serves the one model it was started with
  if (model === undefined) throw new TypeError("vllm serve needs the model to serve");
  // the CLI installed beside the Python that has the libraries, else the one on PATH
  const beside = join(dirname(python), engine);
  return [existsSync(beside) ? beside : engine, "serve", model, ...address, ...extra];
}

/** Starts the model server and resolves once it answers /health (transformers) or /v1/models (vLLM). */
export async function startModelServer(
  engine: "transformers" | "vllm",
  options: { python: string; model: string; log: WriteStream; extraArgs?: readonly string[]; timeoutMs?: number },
): Promise<ModelServer> {
  const port = await freePort();
  const running = startLogged(modelServerCommand(engine, options.python, options.model, port, options.extraArgs ?? []), options.log);
  let failure: unknown;
  running.done.catch((error: unknown) => (failure = error));
  const url = `http://127.0.0.1:${port}`;
  const probe = engine === "vllm" ? `${url}/v1/models` : `${url}/health`;
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  for (;;) {
    if (failure) throw new PipelineError({ code: "MODEL_SERVER_FAILED", message: `${engine} serve did not start: ${(failure as Error).message}` });
    try {
      if ((await fetch(probe)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stopChild(running.child);
      throw new PipelineError({ code: "MODEL_SERVER_TIMEOUT", message: `${engine} serve did not answer ${probe} in time; see the stage log` });
    }
    await new Promise((wait) => setTimeout(wait, 500));
  }
  return { baseUrl: `${url}/v1`, stop: () => stopChild(running.child) };
}
