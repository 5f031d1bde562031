import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Command } from "commander";
import { UsageError } from "../../core/index.ts";
import { createReport, type ReportFormat } from "../../eval/report/index.ts";

interface ReportCommandOptions {
  format: string;
  out?: string;
  card?: boolean;
  allowMismatch?: boolean;
}

export function registerReport(program: Command): void {
  program
    .command("report")
    .description("Tabulate eval runs: CIs per model, paired differences with Holm-corrected significance, optional model card.")
    .argument("<run-dirs...>", "run directories, suite output directories, or folders holding them")
    .option("--format <format>", "md, json or html (self-contained, offline)", "md")
    .option("--out <file>", "write to FILE instead of stdout")
    .option("--card", "write a model card README (markdown) with a finding per row")
    .option("--allow-mismatch", "compare runs whose generation paths or task sets differ (the table says so)")
    .action((runDirectories: string[], options: ReportCommandOptions) => {
      if (!["md", "json", "html"].includes(options.format))
        throw new UsageError({ code: "REPORT_FORMAT", message: `unknown --format '${options.format}'; use md, json or html` });
      const { text } = createReport(runDirectories, { format: options.format as ReportFormat, card: options.card, allowMismatch: options.allowMismatch });
      if (options.out) {
        mkdirSync(dirname(options.out), { recursive: true });
        writeFileSync(options.out, text);
        process.stderr.write(`report written to ${options.out}\n`);
      } else {
        process.stdout.write(text);
      }
    });
}
