import type { Command } from "commander";
import { UsageError } from "../../core/index.ts";
import { createReport, type ReportFormat } from "../../eval/report/index.ts";
import type { CommandContext } from "../io.ts";
import { parseChoice, parseText } from "../options.ts";
import { FORCE_OPTION, STDOUT, checkOutputPath, writeOutputAtomically } from "../output-file.ts";
import { selectRuns } from "../select-runs.ts";
import { writeFileSync } from "node:fs";

interface ReportCommandOptions {
  force?: boolean;
  format?: ReportFormat;
  out?: string;
  card?: boolean;
  allowMismatch?: boolean;
}

export function registerReport(program: Command, { io }: CommandContext): void {
  program
    .command("report")
    .description("Tabulate eval runs: CIs per model, paired differences with Holm-corrected significance, optional model card.")
    .argument("<run-dirs...>", "run directories, suite output directories, or folders holding them (the newest run per benchmark and model is used)")
    .option("--format <format>", "md (default), json or html (self-contained, offline)", parseChoice("--format", ["md", "json", "html"] as const))
    .option("--out <file>", "write to FILE instead of stdout ('-' is stdout)", parseText("--out"))
    .option(...FORCE_OPTION)
    .option("--card", "write a model card README (markdown) with a finding per row")
    .option("--allow-mismatch", "compare runs whose generation paths or task sets differ (the table says so)")
    .action(async (runDirectories: string[], options: ReportCommandOptions) => {
      if (options.card && options.format !== undefined && options.format !== "md")
        throw new UsageError({
          code: "OPTION_CONFLICT",
          message: `--card writes a Markdown model card; drop --format ${options.format}, or drop --card for the ${options.format} report`,
        });
      const toFile = options.out !== undefined && options.out !== STDOUT;
      if (toFile) checkOutputPath(options.out as string, { force: options.force });
      const selection = selectRuns(runDirectories);
      for (const note of selection.notes) io.stderr.write(`toolgym: note: ${note}\n`);
      const { text } = createReport(selection.paths, {
        format: options.format,
        card: options.card,
        allowMismatch: options.allowMismatch,
        inputs: runDirectories,
      });
      if (!toFile || !options.out) return void io.stdout.write(text);
      await writeOutputAtomically(options.out, (path) => writeFileSync(path, text), { force: options.force });
      io.stderr.write(`report written to ${options.out}\n`);
    });
}
