import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { renderCard, renderHtml, type Report } from "../eval/report/index.ts";
import { PALETTE, escapeXml } from "../eval/report/svg.ts";
import { firstRealArm, type PipelineConfig } from "./config.ts";
import {
  armComparisons,
  armCurve,
  armList,
  failureTables,
  pipelineReport,
  sampledResults,
  type ArmEvidence,
  type FailureTable,
  type SampledResult,
} from "./evidence.ts";
import { curveSteps, modelPaths } from "./layout.ts";
import { readStepLogs, readWatch, watchChart, watchMarkdown, WATCH_SMOOTHING, type WatchedArm } from "./watch.ts";

/** What the card stage computed beyond the report: read back by summary.json. */
export interface Evidence {
  arms: ArmEvidence[];
  failures: FailureTable[];
  sampled: SampledResult[];
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

/** The sentence a skeptic reads first: did the real-reward arms improve, and did the controls? */
function verdict(evidence: Evidence, benchmark: string | undefined): string {
  const lines: string[] = [];
  for (const arm of evidence.arms) {
    const row = arm.comparisons.find((comparison) => comparison.metric === "reward" && (benchmark === undefined || comparison.benchmark === benchmark));
    if (!row) {
      lines.push(`- **${arm.name}** (${arm.kind}): not computed (no paired comparison with pre).`);
      continue;
    }
    const improved = row.delta > 0 && row.p_holm < ALPHA;
    const what = `${row.benchmark} mean reward ${format(row.pre.mean)} → ${format(row.post.mean)} (Δ ${signed(row.delta)}, Holm p ${pValue(row.p_holm)} across all arms' rows)`;
    if (arm.kind === "control")
      lines.push(
        improved
          ? `- **${arm.name}** (control, ${arm.transform}): ${what}. **The control improved too: this gain is not the reward's doing** (training at this temperature moved the model without the reward's information).`
          : `- **${arm.name}** (control, ${arm.transform}): ${what}; no significant improvement, as a control should show.`,
      );
    else if (arm.kind === "exploit")
      lines.push(
        `- **${arm.name}** (exploit, seed ${arm.seed}): trained on a deliberately exploitable reward variant; ${what} (the held-out reward is the environment's own).`,
      );
    else lines.push(`- **${arm.name}** (${arm.kind}, seed ${arm.seed}): ${what}; ${improved ? "significant improvement" : "no significant improvement"}.`);
  }
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
  ];
  if (settings.userModel !== undefined || settings.judgeModel !== undefined || config.data.tau2)
    lines.push(
      `- tau2's user simulator: ${settings.userModel ? `\`${settings.userModel.replace(/^.*#/, "")}\`` : "the scripted user"}; NL-assertion judge: ${settings.judgeModel ? `\`${settings.judgeModel.replace(/^.*#/, "")}\`` : "none (such assertions are not computed)"}.`,
    );
  return lines.join("\n");
}

/** The pipeline's sections after the report card: arms, learning curves, failure categories, sampled evaluation. */
function evidenceMarkdown(config: PipelineConfig, evidence: Evidence, watched: readonly WatchedArm[]): string {
  const sections: string[] = [];
  if (evidence.arms.length > 0)
    sections.push(
      "## Arms",
      `Every arm starts from the same SFT model (\`pre\`); comparisons are paired over the same tasks, Holm-adjusted across all arms' rows together.`,
      verdict(evidence, config.grpo?.curve?.benchmark),
    );
  sections.push("## Evaluation settings", evaluationText(config));
  if (config.grpo?.curve) {
    const { benchmark, n } = config.grpo.curve;
    sections.push(
      "## Learning curves",
      `Greedy mean reward on ${benchmark} (n = ${n} held-out tasks per point, 95% bootstrap CIs), one line per arm; step 0 is the SFT model, the last step the final model. Controls are dashed. The other columns are the share of each point's episodes in each failure category.`,
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
  const comparisons = armComparisons(
    report,
    arms.map((arm) => arm.name),
  );
  const checkpoints = curveSteps(config);
  const evidence: Evidence = {
    arms: arms.map((arm) => ({
      ...arm,
      curve: arm.kind === "baseline" ? [] : armCurve(config, out, arm.name, checkpoints),
      comparisons: comparisons.get(arm.name) ?? [],
    })),
    failures: failureTables(out, [...(config.eval.base ? ["base"] : []), "pre", ...arms.map((arm) => arm.name)]),
    sampled: sampledResults(config, out, ["pre", ...(config.eval.base ? ["base"] : []), ...arms.map((arm) => arm.name)]),
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
  const card = `${inside(renderCard(report, { title }))}\n${evidenceMarkdown(config, evidence, watched)}\n`;
  writeAtomically(join(out, "card", "report.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeAtomically(join(out, EVIDENCE_FILE), `${JSON.stringify(evidence, null, 2)}\n`);
  if (config.grpo?.curve) writeAtomically(join(out, "curves.svg"), `${charts[0]}\n`);
  if (watch) writeAtomically(join(out, "watch.svg"), `${watch}\n`);
  const html = renderHtml(report);
  const watchSection = watch ? `<section id="reward-hacking-watch"><h2>Reward-hacking watch</h2>${watch}</section>` : "";
  const section = `<section id="learning-curves"><h2>Learning curves</h2>${config.grpo?.curve ? charts.join("\n") : "<p>No learning curve in this config.</p>"}</section>${watchSection}`;
  writeAtomically(join(out, "report.html"), html.includes("</body>") ? html.replace("</body>", `${section}\n</body>`) : `${html}${section}`);
  writeAtomically(join(out, "card.md"), card);
}
