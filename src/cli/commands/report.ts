import type { Command } from "commander";
import { createReport, type ReportFormat } from "../../eval/report/index.ts";
import type { CommandContext } from "../io.ts";
import { parseChoice, parseText } from "../options.ts";
import { writeOutputAtomically } from "../output-file.ts";
import { selectRuns } from "../select-runs.ts";
import { writeFileSync } from "node:fs";

interface ReportCommandOptions {
  format: ReportFormat;
  out?: string;
  card?: boolean;
  allowMismatch?: boolean;
}

export function registerReport(program: Command, { io }: CommandContext): void {
  program
    .command("report")
    .description("Tabulate eval runs: CIs per model, paired differences with Holm-corrected significance, optional model card.")
    .argument("<run-dirs...>", "run directories, suite output directories, or folders holding them (the newest run per benchmark and model is used)")
    .option("--format <format>", "md, json or html (self-contained, offline)", parseChoice("--format", ["md", "json", "html"] as const), "md")
    .option("--out <file>", "write to FILE instead of stdout", parseText("--out"))
    .option("--card", "write a model card README (markdown) with a finding per row")
    .option("--allow-mismatch", "compare runs whose generation paths or task sets differ (the table says so)")
    .action(async (runDirectories: string[], options: ReportCommandOptions) => {
      const selection = selectRuns(runDirectories);
      for (const note of selection.notes) io.stderr.write(`toolgym: note: ${note}\n`);
      const { text } = createReport(selection.paths, { format: options.format, card: options.card, allowMismatch: options.allowMismatch });
      if (!options.out) return void io.stdout.write(text);
      await writeOutputAtomically(options.out, (path) => writeFileSync(path, text));
      io.stderr.write(`report written to ${options.out}\n`);
    });
}
