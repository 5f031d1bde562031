import type { Report } from "./build.ts";
import { formatInterval, formatPair, formatSigned } from "./format.ts";
import { benchmarkName, cellWithSummary, metricName, subRows, turnLimitText } from "./markdown.ts";
import { splitMetrics } from "./chart-data.ts";
import { PALETTE, SMALL, barChart, escapeXml, histogram } from "./svg.ts";

const STYLE = `body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1200px;padding:0 16px;color:#222}
table{border-collapse:collapse;margin:12px 0;font-size:13px}th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f2f4f8}.subrow td{color:#444;font-size:12px}.unavailable{color:#a33;font-weight:600}.significant{color:#1b7a3a;font-weight:600}.warning{background:#fff4e0}
.charts{display:flex;flex-wrap:wrap;gap:12px}.chart{border:1px solid #e3e3e3;background:#fff}.chart-title{font-size:12px;font-weight:600}.tick{font-size:10px;fill:#444}
.legend span{display:inline-block;margin-right:14px}.swatch{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
code{background:#f4f4f4;padding:0 3px}details{margin:8px 0}`;

function color(report: Report, model: string): string {
  return PALETTE[report.models.indexOf(model) % PALETTE.length] as string;
}

function tableHtml(report: Report): string {
  const others = report.models.slice(1);
  const baseline = report.models[0];
  const head = [
    "Benchmark",
    "Metric",
    ...report.models.map((model) => `${model} (95% CI)`),
    ...others.flatMap((other) => [`Δ ${other} − ${baseline} (95% CI)`, "p (Holm)", "significant"]),
    "Finding",
  ];
  const rows = report.rows.map((row) => {
    const mismatch = row.notes.some((note) => note.startsWith("compared despite"));
    const cells: string[] = [`<td>${escapeXml(benchmarkName(row))}${mismatch ? " ⚠" : ""}</td>`, `<td>${escapeXml(metricName(row.metric))}</td>`];
    if (row.status !== "ok") {
      cells.push(
        `<td class="unavailable" colspan="${Math.max(1, report.models.length + others.length * 3)}">${escapeXml(row.status)}: ${escapeXml(row.reason ?? "")}</td>`,
      );
    } else {
      cells.push(...report.models.map((model) => `<td>${escapeXml(cellWithSummary(report, row, model))}</td>`));
      for (const other of others) {
        const comparison = row.comparisons.find((candidate) => candidate.treatment === other);
        if (!comparison || comparison.n === 0) cells.push("<td>—</td><td>—</td><td>—</td>");
        else
          cells.push(
            `<td>${escapeXml(`${formatSigned(comparison.delta)} ${formatInterval(comparison.low, comparison.high, true)}`)}</td><td>${escapeXml(formatPair(comparison))}</td><td class="${comparison.significant ? "significant" : ""}">${comparison.significant ? "yes" : "no"}</td>`,
          );
      }
    }
    cells.push(`<td>${escapeXml(row.finding)}</td>`);
    const subs = subRows(row).map((sub) => {
      const subCells = [
        `<td>↳ ${escapeXml(sub.name)}</td>`,
        `<td>${escapeXml(sub.metric)}</td>`,
        ...report.models.map((model) => `<td>${escapeXml(sub.cells.get(model) ?? "—")}</td>`),
        ...others.map(() => "<td>—</td><td>—</td><td>—</td>"),
        "<td>per task, descriptive</td>",
      ];
      return `<tr class="subrow">${subCells.join("")}</tr>`;
    });
    return `<tr class="${mismatch ? "warning" : ""}">${cells.join("")}</tr>${subs.join("")}`;
  });
  return `<table id="results"><thead><tr>${head.map((cell) => `<th>${escapeXml(cell)}</th>`).join("")}</tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function chartsHtml(report: Report): string {
  const rows = report.rows.filter((row) => row.status === "ok");
  const metricCharts = rows.map((row) =>
    barChart({
      title: `${benchmarkName(row)} — ${metricName(row.metric)}`,
      label: `bar chart of ${benchmarkName(row)} ${metricName(row.metric)} per model with 95% CIs`,
      groups: [
        {
          label: metricName(row.metric),
          bars: row.cells.map((cell) => ({
            label: cell.model,
            value: cell.mean,
            low: cell.low,
            high: cell.high,
            color: color(report, cell.model),
            ...(cell.notComputed > 0 ? { missing: `not computed in ${cell.notComputed} episodes` } : {}),
          })),
        },
      ],
    }),
  );
  const benchmarks = [...new Set(report.runs.map((run) => run.benchmark))];
  const componentCharts: string[] = [];
  const countCharts: string[] = [];
  for (const benchmark of benchmarks) {
    const runs = report.runs.filter((run) => run.benchmark === benchmark);
    const { components, counts } = splitMetrics(runs);
    const bars = (name: string) =>
      runs.map((run) => ({
        label: `${run.model} ${name}`,
        value: run.components[name] ?? Number.NaN,
        color: color(report, run.model),
        ...(run.notComputed[name] ? { missing: `not computed in ${run.notComputed[name]} episodes` } : {}),
      }));
    // Reward components are scores in [0,1]: a fixed axis keeps benchmarks and models comparable at a glance.
    if (components.length > 0)
      componentCharts.push(
        barChart({
          title: `${benchmark} — reward components`,
          label: `reward-component breakdown of ${benchmark} on a 0 to 1 axis`,
          maximum: 1,
          groups: components.map((name) => ({ label: name, bars: bars(name) })),
        }),
      );
    // Diagnostics are counts on their own scales (tool calls, searches...): one small chart each, so none flattens another.
    for (const name of counts)
      countCharts.push(
        barChart({
          title: `${benchmark} — ${name}`,
          label: `mean ${name} per episode of ${benchmark}`,
          size: SMALL,
          groups: [{ label: `mean ${name}`, bars: bars(name) }],
        }),
      );
  }
  const turnCharts = benchmarks.map((benchmark) => {
    const runs = report.runs.filter((run) => run.benchmark === benchmark);
    return histogram({
      title: `${benchmark} — turns per episode`,
      label: `turn-count histogram of ${benchmark}`,
      series: runs.map((run) => ({ label: run.model, values: run.turns, color: color(report, run.model) })),
    });
  });
  const legend = `<p class="legend">${report.models.map((model) => `<span><i class="swatch" style="background:${color(report, model)}"></i>${escapeXml(model)}</span>`).join("")}</p>`;
  return `<h2>Metrics with 95% CIs</h2>${legend}<div class="charts" id="metric-charts">${metricCharts.join("")}</div><h2>Reward components</h2><div class="charts" id="component-charts">${componentCharts.join("") || "<p>No reward components recorded.</p>"}</div>${countCharts.length > 0 ? `<h2>Diagnostics (mean per episode)</h2><div class="charts" id="count-charts">${countCharts.join("")}</div>` : ""}<h2>Turns per episode</h2><div class="charts" id="turn-charts">${turnCharts.join("")}</div>`;
}

function settingsHtml(report: Report): string {
  const rows = report.runs.map((run) => {
    const generation = run.generation;
    const cells = [
      run.benchmark,
      run.model,
      run.name,
      run.agent,
      `${run.env.split} / seed ${run.env.seed} / n ${run.env.n}`,
      run.env.mode ?? "—",
      JSON.stringify(generation.sampling),
      JSON.stringify(generation.chatTemplateKwargs),
      generation.chatTemplateHash ? `${generation.chatTemplateHash.slice(0, 19)}…` : "—",
      turnLimitText([run]),
      generation.protocol,
      `${run.scored} / ${run.errored}`,
    ];
    return `<tr>${cells.map((cell) => `<td>${escapeXml(cell)}</td>`).join("")}</tr>`;
  });
  const head = [
    "Benchmark",
    "Model",
    "Name",
    "Agent",
    "Tasks",
    "Mode",
    "Sampling",
    "Template kwargs",
    "Template hash",
    "Max turns",
    "Protocol",
    "Scored / errored",
  ];
  return `<table id="settings"><thead><tr>${head.map((cell) => `<th>${cell}</th>`).join("")}</tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** The whole report as one self-contained HTML page: inline CSS and SVG, no scripts, works offline. */
export function renderHtml(report: Report): string {
  const notes: string[] = [];
  if (report.mismatchAllowed)
    notes.push(
      `<p class="warning">⚠ Compared despite mismatches (--allow-mismatch): ${report.mismatches.map((mismatch) => escapeXml(`${mismatch.benchmark}: ${mismatch.field} (${mismatch.detail})`)).join("; ")}</p>`,
    );
  for (const row of report.rows)
    for (const note of row.notes)
      if (!note.startsWith("compared despite")) notes.push(`<p>${escapeXml(`${benchmarkName(row)} ${metricName(row.metric)}: ${note}`)}</p>`);
  const errored =
    report.errored.length === 0
      ? "<p>None: every episode was scored.</p>"
      : `<details open><summary>${report.errored.length} errored episodes (excluded from means)</summary><ul>${report.errored.map((entry) => `<li>${escapeXml(`${entry.benchmark} / ${entry.model} / ${entry.id}: ${entry.code}: ${entry.message}`)}</li>`).join("")}</ul></details>`;
  const title = `toolgym evaluation report${report.suite ? `: ${report.suite}` : ""}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeXml(title)}</title><style>${STYLE}</style></head>
<body><h1>${escapeXml(title)}</h1>
<p>Means over tasks with 95% bootstrap CIs; errored episodes are excluded from means and listed below.${report.models.length > 1 ? ` Δ is the paired difference against ${escapeXml(report.models[0] as string)} (paired-bootstrap CI; McNemar's exact test for binary metrics), Holm-corrected across rows at ${report.alpha}.` : ""}</p>
${tableHtml(report)}
${[...new Set(notes)].join("\n")}
${chartsHtml(report)}
<h2>Generation settings</h2>${settingsHtml(report)}
<h2>Errored episodes</h2>${errored}
<p><small>Generated by toolgym at ${escapeXml(report.createdAt)}.</small></p>
</body></html>
`;
}
