import type { Report, ReportCell, ReportRow, ReportRun } from "./build.ts";
import { formatInterval, formatPair, formatSigned, formatValue } from "./format.ts";
import { summaryText } from "./summary.ts";

const METRIC_NAMES: Record<string, string> = { em: "EM", f1: "F1", reward: "mean reward", return: "mean episode return", progression: "progression" };

export function metricName(metric: string): string {
  return METRIC_NAMES[metric] ?? metric;
}

export function benchmarkName(row: Pick<ReportRow, "title" | "mode">): string {
  return row.mode ? `${row.title} (${row.mode})` : row.title;
}

/** One sub-row of a row's breakdown, ready to render: name, metric label, n and one cell text per model. */
export interface SubRow {
  name: string;
  metric: string;
  n: number;
  cells: Map<string, string>;
}

/** The row's breakdown as sub-rows, e.g. "BALROG BabyAI (text protocol) · goto" with return · progression. */
export function subRows(row: ReportRow): SubRow[] {
  const breakdown = row.breakdown;
  if (!breakdown) return [];
  const protocol = breakdown.protocols.length > 0 ? ` (${breakdown.protocols.join("/")} protocol)` : "";
  return breakdown.groups.map((group) => ({
    name: `${benchmarkName(row)}${protocol} · ${group.value}`,
    metric: breakdown.metrics.map(metricName).join(" · "),
    n: Math.max(0, ...group.cells.map((cell) => cell.n)),
    cells: new Map(
      group.cells.map((cell) => {
        const values = breakdown.metrics.map((metric) => {
          const value = cell.metrics[metric];
          return value ? `${formatValue(value.mean)} ${formatInterval(value.low, value.high)}` : "—";
        });
        return [cell.model, `${values.join(" · ")} (n=${cell.n})`];
      }),
    ),
  }));
}

/** `<` that would open an HTML tag, as `&lt;`: a model name such as `<img onerror=…>` is shown, never rendered. */
export function escapeHtmlTags(text: string): string {
  return text.replace(/<(?=[A-Za-z/!?])/g, "&lt;");
}

function escapeCell(text: string): string {
  return escapeHtmlTags(text.replace(/\|/g, "\\|").replace(/\n/g, " "));
}

export function cellText(cell: ReportCell | undefined): string {
  if (!cell) return "—";
  if (cell.notComputed > 0) return `not computed (${cell.notComputed} episodes)`;
  const extras = [`n=${cell.n}`];
  if (cell.errored > 0) extras.push(`${cell.errored} errored`);
  if (cell.missing > 0) extras.push(`${cell.missing} missing`);
  return `${formatValue(cell.mean)} ${formatInterval(cell.low, cell.high)} (${extras.join(", ")})`;
}

/**
 * A model's cell with the environment's own summary beside the bootstrap CI (e.g. "…; BALROG babyai:
 * 3.12% ± 3.08%, Episodes: 32"), on the last row of its benchmark only so that it shows once.
 */
export function cellWithSummary(report: Report, row: ReportRow, model: string): string {
  const text = cellText(row.cells.find((cell) => cell.model === model));
  const summary = report.rows.findLast((other) => other.benchmark === row.benchmark) === row ? summaryText(row, model) : undefined;
  return summary ? `${text}; ${summary}` : text;
}

/** The evaluation table: one row per benchmark metric, one column per model, then Δ columns. */
export function renderTable(report: Report): string {
  const baseline = report.models[0];
  const others = report.models.slice(1);
  const header = ["Benchmark", "Metric", ...report.models.map((model) => `${model} (95% CI)`)];
  for (const other of others) header.push(`Δ ${other} − ${baseline} (95% CI)`, `p (Holm)`, "significant at 0.05");
  const lines = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  for (const row of report.rows) {
    const cells = [benchmarkName(row), metricName(row.metric)];
    if (row.status !== "ok") {
      cells.push(...report.models.map(() => `**${row.status}**`));
      for (let i = 0; i < others.length; i++) cells.push("—", "—", "—");
      if (report.models.length === 0) cells.push(`**${row.status}**`);
    } else {
      cells.push(...report.models.map((model) => cellWithSummary(report, row, model)));
      for (const other of others) {
        const comparison = row.comparisons.find((candidate) => candidate.treatment === other);
        if (!comparison || comparison.n === 0) cells.push("—", "—", "—");
        else
          cells.push(
            `${formatSigned(comparison.delta)} ${formatInterval(comparison.low, comparison.high, true)}`,
            formatPair(comparison),
            comparison.significant ? "**yes**" : "no",
          );
      }
    }
    if (row.notes.some((note) => note.startsWith("compared despite mismatches"))) cells[0] = `${cells[0]} ⚠`;
    lines.push(`| ${cells.map(escapeCell).join(" | ")} |`);
    for (const sub of subRows(row)) {
      const subCells = [`↳ ${sub.name}`, sub.metric, ...report.models.map((model) => sub.cells.get(model) ?? "—"), ...others.flatMap(() => ["—", "—", "—"])];
      lines.push(`| ${subCells.map(escapeCell).join(" | ")} |`);
    }
  }
  if (report.models.length === 0) lines[0] = `| Benchmark | Metric | Result |`;
  if (report.models.length === 0) lines[1] = `|---|---|---|`;
  return lines.join("\n");
}

export function renderFindings(report: Report): string {
  return report.rows.map((row) => `- **${benchmarkName(row)} ${metricName(row.metric)}**: ${row.finding}`).join("\n");
}

export function renderNotes(report: Report): string {
  const lines: string[] = [];
  if (report.mismatchAllowed) {
    lines.push(`- ⚠ **Compared despite mismatches (--allow-mismatch)**; the rows marked ⚠ are not apples to apples:`);
    for (const mismatch of report.mismatches)
      lines.push(
        `  - ${mismatch.benchmark}: ${mismatch.kind === "generation" ? "generation path" : "task set"} field \`${mismatch.field}\` differs (${mismatch.detail})`,
      );
  }
  for (const row of report.rows)
    for (const note of row.notes) if (!note.startsWith("compared despite")) lines.push(`- ${benchmarkName(row)} ${metricName(row.metric)}: ${note}`);
  return [...new Set(lines)].join("\n");
}

/**
 * The turn limit of runs in words: one number when every episode had the same limit, else "per task: 24–92"
 * (search_plan sizes the limit to each task's plan); the metadata's value when no trajectory records one.
 */
export function turnLimitText(runs: readonly ReportRun[]): string {
  const limits = runs.flatMap((run) => (run.turnLimits ? [run.turnLimits] : []));
  if (limits.length === 0) return String(runs[0]?.generation.maxTurns ?? "env default");
  const min = Math.min(...limits.map((limit) => limit.min));
  const max = Math.max(...limits.map((limit) => limit.max));
  return min === max ? String(min) : `per task: ${min}–${max}`;
}

/** Generation settings per model (from its first run), then per benchmark: tasks, mode, protocol, turns. */
export function renderGeneration(report: Report): string {
  const json = (value: unknown) => (value === null || value === undefined ? "—" : `\`${JSON.stringify(value)}\``);
  const lines = ["| Model | Served name | Agent | Sampling | Chat-template kwargs | Chat template hash | On no tool call |", "|---|---|---|---|---|---|---|"];
  for (const model of report.models) {
    const run = report.runs.find((candidate) => candidate.model === model);
    if (!run) continue;
    const generation = run.generation;
    const hash = generation.chatTemplateHash ? `\`${generation.chatTemplateHash.slice(0, 19)}…\`` : "—";
    lines.push(
      `| ${[model, run.name, run.agent, json(generation.sampling), json(generation.chatTemplateKwargs), hash, generation.onNoToolCall].map((cell) => escapeCell(String(cell))).join(" | ")} |`,
    );
  }
  lines.push(
    "",
    "| Benchmark | Environment | Split | Seed | n (tasks) | Samples | Mode | Protocol | Max turns | Scored / errored per model |",
    "|---|---|---|---|---|---|---|---|---|---|",
  );
  const seen = new Set<string>();
  for (const row of report.rows) {
    if (seen.has(row.benchmark)) continue;
    seen.add(row.benchmark);
    const runs = report.runs.filter((run) => run.benchmark === row.benchmark);
    const first = runs[0];
    if (!first) {
      lines.push(`| ${benchmarkName(row)} | ${row.env} | ${row.split ?? "—"} | — | — | — | ${row.mode ?? "—"} | — | — | ${row.status} |`);
      continue;
    }
    const counts = runs.map((run) => `${run.model}: ${run.scored} / ${run.errored}`).join("; ");
    const cells = [
      benchmarkName(row),
      first.env.id,
      first.env.split,
      first.env.seed,
      first.env.n,
      first.env.samples,
      first.env.mode ?? "—",
      first.generation.protocol,
      turnLimitText(runs),
      counts,
    ];
    lines.push(`| ${cells.map((cell) => escapeCell(String(cell))).join(" | ")} |`);
  }
  return lines.join("\n");
}

export function renderErrored(report: Report): string {
  const failures = report.modelFailures ?? [];
  const scoredFailures = failures.map(
    (entry) =>
      `- ${entry.benchmark} / ${entry.model}: ${entry.count} episode${entry.count === 1 ? "" : "s"} ended as ${entry.termination} (the model's failure, scored)`,
  );
  if (report.errored.length === 0) return [...scoredFailures, "None: every episode was scored."].join("\n");
  // A model failure that is errored here was left out by the benchmark's own rule (tau2: an LLM error is an infrastructure error).
  const leftOut = report.errored.filter((entry) => entry.code.startsWith("MODEL_"));
  const byRule =
    leftOut.length > 0
      ? [
          `${leftOut.length} of the ${report.errored.length} errored episodes are model failures (${[...new Set(leftOut.map((entry) => entry.code))].join(", ")}) that the benchmark's own runner records as infrastructure errors, so they are left out of its means as it does.`,
        ]
      : [];
  return [
    ...scoredFailures,
    ...byRule,
    ...report.errored.map((entry) => `- ${entry.benchmark} / ${entry.model} / \`${entry.id}\`: ${entry.code}: ${escapeCell(entry.message)}`),
  ].join("\n");
}

export function renderMarkdown(report: Report): string {
  const sections = [
    `# toolgym evaluation report${report.suite ? `: suite \`${report.suite}\`` : ""}`,
    `Each cell: mean over tasks, ${report.confidence * 100}% bootstrap CI (resampling tasks), n scored tasks. Errored episodes are excluded from means and listed below.` +
      (report.models.length > 1
        ? ` Δ: paired difference against ${report.models[0]} (paired bootstrap CI; p from McNemar's exact test for binary metrics, else the paired bootstrap), Holm-corrected across rows at ${report.alpha}.`
        : ""),
    renderTable(report),
    "## Findings",
    renderFindings(report),
  ];
  const notes = renderNotes(report);
  if (notes) sections.push("## Notes", notes);
  sections.push("## Generation settings", renderGeneration(report), "## Errored episodes", renderErrored(report));
  return `${sections.join("\n\n")}\n`;
}
