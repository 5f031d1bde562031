import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { registerAudit } from "./commands/audit.ts";
import { registerDataset } from "./commands/dataset.ts";
import { registerEval } from "./commands/eval.ts";
import { registerExport } from "./commands/export.ts";
import { registerList } from "./commands/list.ts";
import { registerPipeline } from "./commands/pipeline.ts";
import { registerReplay } from "./commands/replay.ts";
import { registerReport } from "./commands/report.ts";
import { registerRescore } from "./commands/rescore.ts";
import { registerScore } from "./commands/score.ts";
import { registerServe } from "./commands/serve.ts";
import { registerSft } from "./commands/sft.ts";
import { registerShow } from "./commands/show.ts";
import { registerView } from "./commands/view.ts";
import { EXIT_OK, EXIT_USAGE, reportError } from "./errors.ts";
import type { CliIo, CommandContext } from "./io.ts";

export type { CliIo } from "./io.ts";

/** The package version, from package.json (one source of truth). */
export function toolgymVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return manifest.version;
}

/** commander codes that mean "help or version was printed as asked": not an error. */
const PRINTED = new Set(["commander.helpDisplayed", "commander.version"]);

/**
 * The `toolgym` program: every command and option, registered with `context`'s streams. `main()` parses
 * with it; `docs/cli.md` is generated from it (scripts/cli-reference.ts), so the reference cannot drift.
 */
export function createProgram(context: CommandContext): Command {
  const { io } = context;
  const program = new Command("toolgym")
    .description("Train and evaluate tool-using LLM agents on deterministic environments.")
    .version(toolgymVersion(), "-V, --version", "print the toolgym version")
    .exitOverride()
    .showSuggestionAfterError(true)
    // commander's own error text is replaced by reportError's one line; help goes where it was asked for.
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text), outputError: () => undefined });
  registerEval(program, context);
  registerAudit(program, context);
  registerShow(program, context);
  registerList(program, context);
  registerSft(program, context);
  registerReplay(program, context);
  registerScore(program, context);
  registerExport(program, context);
  registerReport(program, context);
  registerRescore(program, context);
  registerServe(program, context);
  registerDataset(program, context);
  registerView(program, context);
  registerPipeline(program, context);
  return program;
}

/**
 * Entry point of the `toolgym` command: parses `argv` (without the node and script paths), runs the
 * command with `io`'s streams and returns the exit code (0 ok, 1 runtime failure, 2 usage, 130
 * interrupted). Every failure is one line `toolgym: <message> [CODE]` on `io.stderr`.
 */
export async function main(argv: string[], io: CliIo): Promise<number> {
  let exitCode = EXIT_OK;
  const program = createProgram({
    io,
    setExitCode: (code) => {
      exitCode = code;
    },
  });
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError && PRINTED.has(error.code)) return EXIT_OK;
    // `toolgym` alone: commander printed the help on stderr; that is a usage error.
    if (error instanceof CommanderError && error.code === "commander.help") return EXIT_USAGE;
    // The command as typed, subcommand included (`sft synth`), so the hint names the --help that lists the option.
    const top = program.commands.find((candidate) => candidate.name() === argv[0]);
    const sub = top?.commands.find((candidate) => candidate.name() === argv[1]);
    const report = reportError(error, top ? [top.name(), ...(sub ? [sub.name()] : [])].join(" ") : undefined);
    io.stderr.write(`${[report.line, ...(report.details ?? [])].join("\n")}\n`);
    return report.exitCode;
  }
  return exitCode;
}
