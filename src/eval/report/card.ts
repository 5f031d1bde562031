import type { Report } from "./build.ts";
import { benchmarkName, cellWithSummary, metricName, renderErrored, renderGeneration, renderNotes, subRows } from "./markdown.ts";

function yamlString(text: string): string {
  return JSON.stringify(text);
}

/**
 * The model card README in the seed's shape: front matter, the evaluation table (one column per model,
 * a finding per row), the per-benchmark n, the generation settings and how to reproduce.
 */
export function renderCard(report: Report, options: { title?: string } = {}): string {
  const last = report.models.at(-1);
  const lastRun = report.runs.find((run) => run.model === last);
  const baseRun = report.runs.find((run) => run.model === report.models[0]);
  const scriptedOnly = report.runs.length > 0 && report.runs.every((run) => run.name.startsWith("scripted:"));
  const title = options.title ?? (scriptedOnly ? "toolgym evaluation: scripted agents" : lastRun ? lastRun.name : "toolgym evaluation");
  const front = ["---", "library_name: transformers", "tags:", "  - toolgym", "  - tool-use", "  - evaluation"];
  if (baseRun && report.models.length > 1 && !baseRun.name.startsWith("scripted:")) front.push(`base_model: ${yamlString(baseRun.name)}`);
  front.push("---");

  const header = ["Benchmark", "Metric", "n", ...report.models, "Finding"];
  const table = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  for (const row of report.rows) {
    const n = row.status === "ok" ? String(Math.max(...row.cells.map((cell) => cell.n))) : "—";
    const cells = row.status === "ok" ? report.models.map((model) => cellWithSummary(report, row, model)) : report.models.map(() => `**${row.status}**`);
    const finding = row.status === "ok" ? row.finding : `not evaluated: ${row.status}`;
    const name = row.notes.some((note) => note.startsWith("compared despite")) ? `${benchmarkName(row)} ⚠` : benchmarkName(row);
    table.push(`| ${[name, metricName(row.metric), n, ...cells, finding].map((cell) => cell.replace(/\|/g, "\\|")).join(" | ")} |`);
    for (const sub of subRows(row)) {
      const subCells = [`↳ ${sub.name}`, sub.metric, String(sub.n), ...report.models.map((model) => sub.cells.get(model) ?? "—"), "per task, descriptive"];
      table.push(`| ${subCells.map((cell) => cell.replace(/\|/g, "\\|")).join(" | ")} |`);
    }
  }

  const comparing = report.models.length > 1;
  const intro = comparing
    ? `Evaluated with toolgym${report.suite ? ` (suite \`${report.suite}\`)` : ""}: ${report.models.join(" vs ")}, the same tasks and seeds and the same generation path for every model. Cells are means with 95% bootstrap confidence intervals over tasks; each finding gives the paired difference against ${report.models[0]} with its 95% paired-bootstrap CI and p-value (McNemar's exact test for binary metrics such as EM), Holm-corrected across the ${report.rows.filter((row) => row.status === "ok").length} rows at ${report.alpha}.`
    : `Evaluated with toolgym${report.suite ? ` (suite \`${report.suite}\`)` : ""}. Cells are means with 95% bootstrap confidence intervals over tasks.`;
  const unavailable = report.rows.filter((row) => row.status !== "ok");
  const sections = [front.join("\n"), `# ${title}`, "## Evaluation", intro, table.join("\n")];
  if (unavailable.length > 0) {
    sections.push(`Not evaluated here: ${[...new Set(unavailable.map((row) => `${benchmarkName(row)} (${row.reason ?? row.status})`))].join("; ")}.`);
  }
  sections.push(
    "### Findings",
    report.rows
      .map(
        (row) =>
          `- **${benchmarkName(row)} ${metricName(row.metric)}**: ${row.status === "ok" ? row.finding : `not evaluated: ${row.status} (${row.reason})`}.`,
      )
      .join("\n"),
  );
  const notes = renderNotes(report);
  if (notes) sections.push("### Notes", notes);
  sections.push("## Generation settings and per-benchmark n", renderGeneration(report));
  sections.push(
    "## Errored episodes",
    `Errored episodes (server failures that survived retries) are excluded from the means, never scored as 0.\n\n${renderErrored(report)}`,
  );
  const models = scriptedOnly ? "" : report.models.map((model) => ` --model ${model}=URL#MODEL`).join("");
  const evalCommand = `npx toolgym eval --suite ${report.suite ?? "FILE"}${models}${report.suite === "seed-card" ? " --data-dir DATA" : ""} --out runs/card`;
  sections.push("## Reproduce", ["```bash", evalCommand, "npx toolgym report runs/card --card --out README.md", "```"].join("\n"));
  return `${sections.join("\n\n")}\n`;
}
