import { Command, CommanderError } from "commander";
import { ToolgymError } from "../core/index.ts";
import { registerAudit } from "./commands/audit.ts";
import { registerEval } from "./commands/eval.ts";
import { registerReplay } from "./commands/replay.ts";
import { registerScore } from "./commands/score.ts";
import { registerReport } from "./commands/report.ts";
import { registerShow } from "./commands/show.ts";
import { registerSft } from "./commands/sft.ts";
import { registerServe } from "./commands/serve.ts";
import { registerDataset } from "./commands/dataset.ts";
import { registerView } from "./commands/view.ts";

/** Entry point of the `toolgym` command; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const program = new Command("toolgym")
    .description("Train and evaluate tool-using LLM agents on deterministic environments.")
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  let exitCode = 0;
  const setExitCode = (code: number) => {
    exitCode = code;
  };
  registerEval(program, setExitCode);
  registerAudit(program, setExitCode);
  registerShow(program);
  registerSft(program, setExitCode);
  registerReplay(program);
  registerScore(program);
  registerReport(program);
  registerServe(program);
  registerDataset(program);
  registerView(program);
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (ToolgymError.isInstance(error)) {
      process.stderr.write(`toolgym: ${error.message} [${error.code}]\n`);
      return error.boundary === "cli" || error.boundary === "config" ? 2 : 1;
    }
    throw error;
  }
  return exitCode;
}
