import { UsageError } from "../../core/index.ts";
import { buildReport, type Report } from "./build.ts";
import { renderCard } from "./card.ts";
import { renderHtml } from "./html.ts";
import { loadInputs } from "./load.ts";
import { renderMarkdown } from "./markdown.ts";

export { buildReport, type Report, type ReportRow, type ReportCell, type ReportComparison } from "./build.ts";
export { loadInputs, loadRun } from "./load.ts";
export { ReportMismatchError } from "./mismatch.ts";
export { renderCard } from "./card.ts";
export { renderHtml } from "./html.ts";
export { renderMarkdown } from "./markdown.ts";

export type ReportFormat = "md" | "json" | "html";

export function renderReport(report: Report, options: { format?: ReportFormat; card?: boolean; inputs?: readonly string[] }): string {
  if (options.card) return renderCard(report, options.inputs ? { inputs: options.inputs } : {});
  const format = options.format ?? "md";
  if (format === "md") return renderMarkdown(report);
  if (format === "json") return `${JSON.stringify(report, null, 2)}\n`;
  if (format === "html") return renderHtml(report);
  throw new UsageError({ code: "REPORT_FORMAT", message: `unknown --format '${String(format)}'; use md, json or html` });
}

/** Loads run directories and renders the report (markdown, JSON, HTML) or the model card. */
export function createReport(
  paths: readonly string[],
  options: { format?: ReportFormat; card?: boolean; allowMismatch?: boolean; inputs?: readonly string[] } = {},
): { report: Report; text: string } {
  const report = buildReport(loadInputs(paths), { allowMismatch: options.allowMismatch });
  return { report, text: renderReport(report, options) };
}
