import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { renderCard, renderHtml, type Report } from "../eval/report/index.ts";
import { PALETTE, escapeXml } from "../eval/report/svg.ts";
import { firstRealArm, type PipelineConfig } from "./config.ts";
import { armCurve, armList, failureTables, pipelineReport, sampledResults, type ArmEvidence, type FailureTable, type SampledResult } from "./evidence.ts";
import { familyComparisons, familySize } from "./family.ts";
import { floorRows, floorsMarkdown, type FloorRow } from "./floors.ts";
import { curveSteps, modelPaths } from "./layout.ts";
import { packEvidence } from "./pack.ts";
import { readStepLogs, readWatch, watchChart, watchMarkdown, WATCH_SMOOTHING, type WatchedArm } from "./watch.ts";

/** What the card stage computed beyond the report: read back by summary.json. */
export interface Evidence {
  arms: ArmEvidence[];
  failures: FailureTable[];
  sampled: SampledResult[];
  floors: FloorRow[];
}

export const EVIDENCE_FILE = join("card", "evidence.json");
const ALPHA = 0.05;

function writeAtomically(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.partial`, text);
  renameSync(`${path}.partial`, path);
}

const format = (value: number) => (Number.isFinite(value) ? value.toFixed(3) : "not computed");
const signed = (value: number) => (value >= 0 ? `+${format(value)}` : format(value));
const pValue = (value: number) => (!Number.isFinite(value) ? "not computed" : value < 1e-3 ? value.toExponential(1) : value.toFixed(3));

/** Line chart of each arm's curve (mean with a CI band per point), one line per arm; `pick` chooses the plotted value. */
export function curveChart(
  all: readonly ArmEvidence[],
  title: string,
  pick: (point: ArmEvidence["curve"][number]) => { value: number; low?: number; high?: number },
): string {
  const arms = all.filter((arm) => arm.curve.length > 0);
  const width = 520;
  const height = 280;
  const margin = { top: 28, right: 130, bottom: 40, left: 48 };
  const points = arms.flatMap((arm) => arm.curve.map((point) => ({ step: point.step, ...pick(point) })));
  const maxStep = Math.max(1, ...points.map((point) => point.step));
  const maxValue = Math.max(1e-9, ...points.flatMap((point) => [point.value, point.high ?? point.value]).filter(Number.isFinite));
  const top = maxValue <= 1 ? 1 : Math.ceil(maxValue);
  const x = (step: number) => margin.left + ((width - margin.left - margin.right) * step) / maxStep;
  const y = (value: number) => margin.top + (height - margin.top - margin.bottom) * (1 - Math.max(0, Math.min(value, top)) / top);
  let body = `<line x1="${margin.left}" y1="${y(0)}" x2="${width - margin.right}" y2="${y(0)}" stroke="#555"/><line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${y(0)}" stroke="#555"/>`;
  for (let tick = 0; tick <= 4; tick++) {
    const value = (top * tick) / 4;
    body += `<text x="${margin.left - 6}" y="${y(value).toFixed(1)}" dy="4" text-anchor="end" class="tick">${Number(value.toFixed(2))}</text>`;
  }
  const steps = [...new Set(points.map((point) => point.step))].sort((a, b) => a - b);
  for (const step of steps) body += `<text x="${x(step).toFixed(1)}" y="${height - margin.bottom + 16}" text-anchor="middle" class="tick">${step}</text>`;
  body += `<text x="${(margin.left + width - margin.right) / 2}" y="${height - 6}" text-anchor="middle" class="tick">GRPO step</text>`;
  arms.forEach((arm, index) => {
    const color = PALETTE[index % PALETTE.length] as string;
    const series = arm.curve.map((point) => ({ step: point.step, ...pick(point) })).filter((point) => Number.isFinite(point.value));
    const dash = arm.kind === "control" ? ' stroke-dasharray="5 3"' : arm.kind === "exploit" ? ' stroke-dasharray="2 2"' : "";
    body += `<polyline class="curve" data-arm="${escapeXml(arm.name)}" fill="none" stroke="${color}" stroke-width="2"${dash} points="${series.map((point) => `${x(point.step).toFixed(1)},${y(point.value).toFixed(1)}`).join(" ")}"/>`;
    for (const point of series) {
      if (point.low !== undefined && point.high !== undefined && Number.isFinite(point.low))
        body += `<path d="M${x(point.step).toFixed(1)} ${y(point.low).toFixed(1)}V${y(point.high).toFixed(1)}" stroke="${color}" stroke-opacity="0.6" stroke-width="1.5"/>`;
      body += `<circle cx="${x(point.step).toFixed(1)}" cy="${y(point.value).toFixed(1)}" r="3" fill="${color}"><title>${escapeXml(`${arm.name} step ${point.step}: ${format(point.value)}`)}</title></circle>`;
    }
    body += `<text x="${width - margin.right + 8}" y="${margin.top + 16 * index + 4}" fill="${color}" class="legend">${escapeXml(`${arm.name} (${arm.kind})`)}</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" aria-label="${escapeXml(title)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11"><title>${escapeXml(title)}</title><text x="${width / 2}" y="16" text-anchor="middle">${escapeXml(title)}</text>${body}</svg>`;
}

/** The failure categories the curves carry, in the order the environment lists them. */
const diagnosticNames = (arms: readonly ArmEvidence[]) => [...new Set(arms.flatMap((arm) => arm.curve.flatMap((point) => Object.keys(point.diagnostics))))];

/** The sentences a skeptic reads first: each arm against each model it is paired with, on the curve's benchmark. */
function verdict(evidence: Evidence, benchmark: string | undefined): string {
  const lines: string[] = [];
  const m = familySize(evidence.arms);
  for (const arm of evidence.arms) {
    const rows = arm.comparisons.filter((comparison) => comparison.metric === "reward" && (benchmark === undefined || comparison.benchmark === benchmark));
    const from = arm.kind === "baseline" ? "SFT from the base model on the filtered demonstrations" : `from \`${arm.init}\``;
    const head = `- **${arm.name}** (${arm.kind}${arm.transform ? `, ${arm.transform}` : ""}, seed ${arm.seed}, ${from})`;
    if (rows.length === 0) {
      lines.push(`${head}: not computed (no paired comparison).`);
      continue;
    }
    const parts = rows.map((row) => {
      const direction = row.p_holm < ALPHA ? (row.delta > 0 ? "significantly above" : "significantly below") : "not significantly different from";
      return `${direction} \`${row.against}\` on ${row.benchmark} (${format(row.pre.mean)} → ${format(row.post.mean)}, Δ ${signed(row.delta)}, Holm p ${pValue(row.p_holm)}, n ${row.n})`;
    });
    const controlNote =
      arm.kind === "control"
        ? rows.some((row) => row.against === "pre" && row.delta > 0 && row.p_holm < ALPHA)
          ? " **The control improved too: a gain of the same size is not the reward's doing.**"
          : " A control should not improve on `pre`."
        : arm.kind === "exploit"
          ? " Trained on a deliberately exploitable reward variant; the held-out reward is the environment's own."
          : "";
    lines.push(`${head}: ${parts.join("; ")}.${controlNote}`);
  }
  lines.push(
    "",
    `Holm's adjustment runs over the whole family: ${m} paired comparisons (every arm against every model it is paired with, on every benchmark and metric of the suite). The report card above adjusts over its own rows (each model against the first), so its p-values differ.`,
  );
  return lines.join("\n");
}

function failureMarkdown(tables: readonly FailureTable[]): string {
  return tables
    .map((table) => {
      const header = ["Failure (episodes)", ...table.models.map((model) => `${model.label} (n=${model.episodes})`)];
      const rows = table.categories.map((category) => [
        category,
        ...table.models.map((model) => `${model.counts[category] ?? 0} (${((100 * (model.counts[category] ?? 0)) / Math.max(1, model.episodes)).toFixed(0)}%)`),
      ]);
      return [
        `**${table.benchmark}**`,
        "",
        `| ${header.join(" | ")} |`,
        `|${header.map(() => "---").join("|")}|`,
        ...rows.map((row) => `| ${row.join(" | ")} |`),
      ].join("\n");
    })
    .join("\n\n");
}

function sampledMarkdown(results: readonly SampledResult[]): string {
  const header = ["Benchmark", "Model", "n × k", "mean reward", `pass@k`, "Δ reward vs pre"];
  const rows = results.map((result) => [
    result.benchmark,
    result.label,
    `${result.n} × ${result.samples} (T=${result.temperature})`,
    `${format(result.reward.mean)} [${format(result.reward.ci_low)}, ${format(result.reward.ci_high)}]`,
    `${format(result.pass_at_k.mean)} [${format(result.pass_at_k.ci_low)}, ${format(result.pass_at_k.ci_high)}]`,
    result.delta ? `${signed(result.delta.delta)} [${signed(result.delta.ci_low)}, ${signed(result.delta.ci_high)}], p ${pValue(result.delta.p)}` : "—",
  ]);
  return [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n");
}

function curveMarkdown(arms: readonly ArmEvidence[]): string {
  const names = diagnosticNames(arms);
  const header = ["Arm", "step", "mean reward [95% CI]", ...names.map((name) => `${name} (share)`)];
  const rows = arms.flatMap((arm) =>
    arm.curve.map((point) => [
      arm.name,
      String(point.step),
      `${format(point.mean)} [${format(point.ci_low)}, ${format(point.ci_high)}]`,
      ...names.map((name) => (point.diagnostics[name] === undefined ? "—" : point.diagnostics[name]!.toFixed(2))),
    ]),
  );
  return [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n");
}

/** How the models were evaluated: trials, the user simulator and judge, the chat template's switches. */
function evaluationText(config: PipelineConfig): string {
  const settings = config.eval;
  const models = [...(settings.base ? ["`base` (the base model)"] : []), "`pre` (the model after SFT)", ...armList(config).map((arm) => `\`${arm.name}\``)];
  const lines = [
    `- Models: ${models.join(", ")}, each behind ${settings.engine} serve, temperature ${settings.temperature}, at most ${settings.maxTokens} tokens a reply, chat template kwargs \`${JSON.stringify(settings.chatTemplateKwargs)}\`.`,
    `- Plays per task: ${settings.trials}${settings.trials > 1 ? " (pass^k for k up to that, beside the mean)" : ""}.`,
    settings.seeds
      ? `- Seeds: **test seed ${settings.seeds.test}** for the suite and sampled evaluations (the final comparison: tasks no choice was made on, evaluated once); **development seed ${settings.seeds.dev}** for the learning curves (the tasks the run's design was tuned on).`
      : "- Seeds: the suite rows' own (no separate development and test seeds).",
  ];
  if (settings.userModel !== undefined || settings.judgeModel !== undefined || config.data.tau2)
    lines.push(
      `- tau2's user simulator: ${settings.userModel ? `\`${settings.userModel.replace(/^.*#/, "")}\`` : "the scripted user"}; NL-assertion judge: ${settings.judgeModel ? `\`${settings.judgeModel.replace(/^.*#/, "")}\`` : "none (such assertions are not computed)"}.`,
    );
  return lines.join("\n");
}

/** The pipeline's sections after the report card: arms, learning curves, failure categories, sampled evaluation. */
function evidenceMarkdown(config: PipelineConfig, evidence: Evidence, report: Report, watched: readonly WatchedArm[]): string {
  const sections: string[] = [];
  if (evidence.arms.length > 0)
    sections.push(
      "## Arms",
      `Each arm against every model it is paired with (the SFT model \`pre\`; an arm on the environment's reward also against the filtered-SFT baseline and each control), over the same tasks, mean reward on ${config.grpo?.curve?.benchmark ?? "each benchmark"}; summary.json has every benchmark and metric.`,
      verdict(evidence, config.grpo?.curve?.benchmark),
    );
  if (evidence.floors.length > 0)
    sections.push(
      "## Floors",
      "What the environment's scripted pilots (policies that game or skip the task, from its definition) earn on the same tasks, with the same turn limit and trials: the one that does nothing, and the best-scoring one. A model below a floor is flagged.",
      floorsMarkdown(evidence.floors, report),
    );
  sections.push("## Evaluation settings", evaluationText(config));
  if (config.grpo?.curve) {
    const { benchmark, n } = config.grpo.curve;
    sections.push(
      "## Learning curves",
      `Greedy mean reward on ${benchmark} (n = ${n} held-out tasks per point, 95% bootstrap CIs), one line per arm; step 0 is the model the arm started from (the SFT model \`pre\`, or the filtered-SFT model for an arm started from it), the last step the final model.${config.eval.seeds ? ` The curves run on the development seed's tasks (seed ${config.eval.seeds.dev}), not the test seed's.` : ""} Controls are dashed. The other columns are the share of each point's episodes in each failure category.`,
    );
    sections.push("![learning curves](curves.svg)", curveMarkdown(evidence.arms.filter((arm) => arm.curve.length > 0)));
  }
  if (watched.some((arm) => arm.watch.length > 0))
    sections.push(
      "## Reward-hacking watch",
      `Every scored training episode, per GRPO step: the mean reward the arm trained on, the mean outcome (the environment's success component), and the share of episodes showing each of the environment's gaming signatures (trailing mean of ${WATCH_SMOOTHING} steps in the chart; first and last ${WATCH_SMOOTHING} steps in the table). An arm is flagged when a signature's share rose while the reward rose and the outcome did not (docs/training.md, "The watch"); controls are dashed, exploit arms dotted.`,
      "![reward-hacking watch](watch.svg)",
      watchMarkdown(watched),
    );
  if (evidence.failures.length > 0)
    sections.push(
      "## What changed: failure categories",
      "Episodes of the greedy suite evaluation in each of the environment's failure categories (an episode may fall in several), per model.",
      failureMarkdown(evidence.failures),
    );
  if (evidence.sampled.length > 0)
    sections.push(
      "## Sampled evaluation",
      "Beside greedy: k samples per task at temperature T; pass@k is the share of tasks where at least one sample earned full reward (reward ≥ 1).",
      sampledMarkdown(evidence.sampled),
    );
  return sections.join("\n\n");
}

/** Computes the arms' evidence and writes card.md, curves.svg, report.html, card/report.json and card/evidence.json. */
export function writeEvidence(config: PipelineConfig, out: string): void {
  const arms = armList(config);
  const report: Report = pipelineReport(
    config,
    out,
    arms.map((arm) => arm.name),
  );
  const comparisons = familyComparisons(out, arms);
  const checkpoints = curveSteps(config);
  const evidence: Evidence = {
    arms: arms.map((arm) => ({
      ...arm,
      curve: arm.kind === "baseline" ? [] : armCurve(config, out, { name: arm.name, init: arm.init === "pre" ? "pre" : "baseline" }, checkpoints),
      comparisons: comparisons.get(arm.name) ?? [],
    })),
    failures: failureTables(out, [...(config.eval.base ? ["base"] : []), "pre", ...arms.map((arm) => arm.name)]),
    sampled: sampledResults(config, out, ["pre", ...(config.eval.base ? ["base"] : []), ...arms.map((arm) => arm.name)]),
    floors: floorRows(config, out),
  };
  const watched: WatchedArm[] = evidence.arms
    .filter((arm) => arm.kind !== "baseline")
    .map((arm) => ({ name: arm.name, kind: arm.kind, ...readWatch(readStepLogs(out, arm.name)) }));
  const watch = watchChart(watched);
  const first = firstRealArm(config);
  const models = modelPaths(config, out);
  // The heading names the model as a path inside the run's output, not the machine's temporary directory.
  const title = `${relative(out, first ? models.arm(first.name) : models.pre) || models.pre} (toolgym pipeline, preset ${config.preset})`;
  const inside = (text: string) => text.split(`${out}/`).join("");
  const charts = [
    curveChart(evidence.arms, "held-out mean reward by GRPO step", (point) => ({ value: point.mean, low: point.ci_low, high: point.ci_high })),
    ...diagnosticNames(evidence.arms).map((name) =>
      curveChart(evidence.arms, `share of episodes: ${name}`, (point) => ({ value: point.diagnostics[name] ?? Number.NaN })),
    ),
  ];
  const card = `${inside(renderCard(report, { title }))}\n${evidenceMarkdown(config, evidence, report, watched)}\n`;
  writeAtomically(join(out, "card", "report.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeAtomically(join(out, EVIDENCE_FILE), `${JSON.stringify(evidence, null, 2)}\n`);
  if (config.grpo?.curve) writeAtomically(join(out, "curves.svg"), `${charts[0]}\n`);
  if (watch) writeAtomically(join(out, "watch.svg"), `${watch}\n`);
  const html = renderHtml(report);
  const watchSection = watch ? `<section id="reward-hacking-watch"><h2>Reward-hacking watch</h2>${watch}</section>` : "";
  const section = `<section id="learning-curves"><h2>Learning curves</h2>${config.grpo?.curve ? charts.join("\n") : "<p>No learning curve in this config.</p>"}</section>${watchSection}`;
  writeAtomically(join(out, "report.html"), html.includes("</body>") ? html.replace("</body>", `${section}\n</body>`) : `${html}${section}`);
  writeAtomically(join(out, "card.md"), card);
  packEvidence(out);
}
