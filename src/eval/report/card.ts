import { existsSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { SUITE_MANIFEST } from "../suites/run-suite.ts";
import type { Report } from "./build.ts";
import { benchmarkName, cellWithSummary, escapeHtmlTags, metricName, renderErrored, renderGeneration, renderNotes, subRows } from "./markdown.ts";

/** A table cell: pipes escaped, and HTML a model name may carry shown as text. */
function escapeCardCell(text: string): string {
  return escapeHtmlTags(text.replace(/\|/g, "\\|"));
}

function yamlString(text: string): string {
  return JSON.stringify(text);
}

/**
 * The model card README in the seed's shape: front matter, the evaluation table (one column per model,
 * a finding per row), the per-benchmark n, the generation settings and how to reproduce.
 */
export function renderCard(report: Report, options: { title?: string; inputs?: readonly string[] } = {}): string {
  const last = report.models.at(-1);
  const lastRun = report.runs.find((run) => run.model === last);
  const baseRun = report.runs.find((run) => run.model === report.models[0]);
  const scriptedOnly = report.runs.length > 0 && report.runs.every((run) => run.name.startsWith("scripted:"));
  const title = options.title ?? (scriptedOnly ? "toolgym evaluation: scripted agents" : lastRun ? lastRun.name : "toolgym evaluation");
  const front = ["---", "library_name: transformers", "tags:", "  - toolgym", "  - tool-use", "  - evaluation"];
  if (baseRun && report.models.length > 1 && !baseRun.name.startsWith("scripted:")) front.push(`base_model: ${yamlString(baseRun.name)}`);
  front.push("---");

  const header = ["Benchmark", "Metric", "n", ...report.models.map(escapeHtmlTags), "Finding"];
  const table = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  for (const row of report.rows) {
    const n = row.status === "ok" ? String(Math.max(...row.cells.map((cell) => cell.n))) : "—";
    const cells = row.status === "ok" ? report.models.map((model) => cellWithSummary(report, row, model)) : report.models.map(() => `**${row.status}**`);
    const finding = row.status === "ok" ? row.finding : `not evaluated: ${row.status}`;
    const name = row.notes.some((note) => note.startsWith("compared despite")) ? `${benchmarkName(row)} ⚠` : benchmarkName(row);
    table.push(`| ${[name, metricName(row.metric), n, ...cells, finding].map(escapeCardCell).join(" | ")} |`);
    for (const sub of subRows(row)) {
      const subCells = [`↳ ${sub.name}`, sub.metric, String(sub.n), ...report.models.map((model) => sub.cells.get(model) ?? "—"), "per task, descriptive"];
      table.push(`| ${subCells.map(escapeCardCell).join(" | ")} |`);
    }
  }

  const compared = report.rows.filter((row) => row.comparisons.length > 0).length;
  const unpaired = report.models.length > 1 && report.rows.some((row) => row.cells.length > row.comparisons.length + 1);
  const suite = `Evaluated with toolgym${report.suite ? ` (suite \`${report.suite}\`)` : ""}`;
  const cells = "Cells are means with 95% bootstrap confidence intervals over tasks";
  const paired = `${unpaired ? "where two models ran the same tasks and seeds, " : ""}each finding gives the paired difference against ${escapeHtmlTags(report.models[0] ?? "")} with its 95% paired-bootstrap CI and p-value (McNemar's exact test for binary metrics such as EM), Holm-corrected across the ${compared} compared rows at ${report.alpha}`;
  const intro =
    report.models.length <= 1
      ? `${suite}. ${cells}.`
      : `${suite}: ${report.models.map(escapeHtmlTags).join(" vs ")}, ${unpaired ? "the same generation path for every model; models that ran different task sets are not compared (see the notes)" : "the same tasks and seeds and the same generation path for every model"}. ${cells}${compared > 0 ? `; ${paired}` : ""}.`;
  const unavailable = report.rows.filter((row) => row.status !== "ok");
  const sections = [front.join("\n"), `# ${escapeHtmlTags(title)}`, "## Evaluation", intro, table.join("\n")];
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
  sections.push("## Reproduce", ["```bash", ...reproduceCommands(report, options.inputs ?? ["runs"]), "```"].join("\n"));
  return `${sections.join("\n\n")}\n`;
}

/** A shell word: bare when it is safe, else single-quoted. */
function shellWord(text: string): string {
  return /^[\w./=:#,@+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The commands that remake this card: the evaluation into the folders the report read (a suite, or one
 * `eval` per run with its own task set and agent; model servers as URL placeholders) and the report over
 * them, to a new card.md (report refuses to overwrite an existing file without --force).
 */
function reproduceCommands(report: Report, inputs: readonly string[]): string[] {
  const modelFlag = (run: Report["runs"][number]) => (run.name.startsWith("scripted:") ? "" : ` --model ${shellWord(`${run.model}=URL#${run.name}`)}`);
  const lines = new Set<string>();
  for (const run of report.runs) {
    // <root>/<env>--<label>/<run id>: a suite's root holds its manifest, and one command remakes all its rows.
    const root = dirname(dirname(run.directory));
    // Relative to where the report ran when the runs are below it, else as an absolute path.
    const below = relative(process.cwd(), root);
    const out = shellWord(below === "" ? "." : below.startsWith("..") ? root : below);
    if (report.suite && existsSync(join(root, SUITE_MANIFEST))) {
      const models = [...new Map(report.runs.filter((other) => other.directory.startsWith(root)).map((other) => [other.model, modelFlag(other)])).values()];
      lines.add(`npx toolgym eval --suite ${report.suite}${models.join("")}${report.suite === "seed-card" ? " --data-dir DATA" : ""} --out ${out}`);
      continue;
    }
    const env = run.env;
    const config = JSON.stringify(env.config ?? {});
    const agent = run.name.startsWith("scripted:") ? ` --agent ${shellWord(run.name.slice("scripted:".length))}` : modelFlag(run);
    lines.add(
      [
        `npx toolgym eval --env ${env.id} --split ${shellWord(env.split)} --seed ${env.seed} --n ${env.n}`,
        env.samples > 1 ? ` --num-trials ${env.samples}` : "",
        config === "{}" ? "" : ` --config ${shellWord(config)}`,
        agent,
        ` --out ${out}`,
      ].join(""),
    );
  }
  lines.add(`npx toolgym report ${inputs.map(shellWord).join(" ")} --card --out card.md`);
  return [...lines];
}
