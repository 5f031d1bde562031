import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { getEnvironment } from "../envs/registry.ts";
import { buildReport, loadInputs, type Report } from "../eval/report/index.ts";
import { bootstrapMean, compareTasks, inTaskOrder, mean, passAtK } from "../statistics/statistics.ts";
import { readRun, type LoadedRun } from "../runs/reader.ts";
import { armKind, type Arm, type ArmKind, type PipelineConfig } from "./config.ts";
import { evalStageOf, evidenceLayout, initLabel } from "./layout.ts";

interface Interval {
  mean: number;
  ci_low: number;
  ci_high: number;
}

export interface CurvePoint extends Interval {
  step: number;
  /** The share of episodes in each of the environment's failure categories (collateral write, malformed call, …). */
  diagnostics: Record<string, number>;
}

export interface ArmComparison {
  benchmark: string;
  metric: string;
  /** The model the arm is paired with on the same tasks (`pre`, the baseline, a control). */
  against: string;
  n: number;
  /** The `against` model's mean and CI. */
  pre: Interval;
  /** The arm's. */
  post: Interval;
  delta: number;
  p: number;
  p_holm: number;
}

export interface ArmEvidence {
  name: string;
  kind: ArmKind;
  /** The model it started from: `pre` (the SFT model), the baseline's label, or `base` (the baseline's SFT). */
  init: string;
  seed: number;
  transform: Arm["transform"];
  curve: CurvePoint[];
  comparisons: ArmComparison[];
}

/** The runs under a `toolgym eval --out` directory (`<benchmark>--<label>/<run id>`), if any were written. */
export function runsUnder(directory: string): LoadedRun[] {
  const found: LoadedRun[] = [];
  const visit = (path: string, depth: number) => {
    if (!existsSync(path) || !statSync(path).isDirectory()) return;
    if (existsSync(join(path, "metadata.json"))) return void found.push(readRun(path));
    if (depth > 0) for (const name of readdirSync(path).sort()) if (!name.startsWith(".")) visit(join(path, name), depth - 1);
  };
  visit(directory, 2);
  return found;
}

/** Per-task means of one metric over a run's scored episodes (samples averaged), in task order. */
export function taskMeans(run: LoadedRun, value: (result: LoadedRun["results"][number]) => number | undefined): number[] {
  const byTask = new Map<string, number[]>();
  for (const result of run.results) {
    const number = result.status === "scored" ? value(result) : undefined;
    if (number === undefined || !Number.isFinite(number)) continue;
    const key = String(result.example_id ?? result.id);
    (byTask.get(key) ?? byTask.set(key, []).get(key)!).push(number);
  }
  return inTaskOrder(byTask).map((values) => mean(values));
}

export const rewardOf = (result: LoadedRun["results"][number]) => (typeof result.reward === "number" ? result.reward : undefined);

export function interval(values: number[], seed: string): Interval {
  const found = bootstrapMean(values, { seed });
  return { mean: found.mean, ci_low: found.low, ci_high: found.high };
}

/** A run's scored episodes counted by the environment's failure categories (none when the environment defines none). */
function failureCounts(run: LoadedRun): { categories: string[]; episodes: number; counts: Record<string, number> } | undefined {
  const spec = getEnvironment(run.metadata.env.id).failures;
  if (!spec) return undefined;
  const counts = Object.fromEntries(spec.categories.map((category) => [category, 0]));
  let episodes = 0;
  for (const result of run.results) {
    if (result.status !== "scored") continue;
    episodes++;
    const trajectory = result.info?.trajectory as { diagnostics?: Record<string, never> } | undefined;
    const metrics = Object.fromEntries(Object.entries(result.metrics ?? {}).filter(([, value]) => typeof value === "number")) as Record<string, number>;
    const episode = { metrics, termination: String(result.termination ?? ""), formatErrors: Number(result.format_errors ?? 0) };
    for (const category of spec.classify(trajectory?.diagnostics ? { ...episode, diagnostics: trajectory.diagnostics } : episode))
      counts[category] = (counts[category] ?? 0) + 1;
  }
  return { categories: spec.categories, episodes, counts };
}

/**
 * A curve point: mean reward with its CI, and the share of episodes in each of the environment's failure
 * categories. The CI's bootstrap is seeded by the evaluated model's label and step, so arms that start from the
 * same model show the same step-0 point.
 */
function curvePoint(run: LoadedRun, step: number): CurvePoint {
  const failures = failureCounts(run);
  const diagnostics = Object.fromEntries(
    failures ? failures.categories.map((category) => [category, (failures.counts[category] ?? 0) / Math.max(1, failures.episodes)]) : [],
  );
  return { step, ...interval(taskMeans(run, rewardOf), `curve/${run.metadata.benchmark}/${run.metadata.model.label}/${step}`), diagnostics };
}

/** An arm's curve: its starting model at step 0, each checkpoint, the final model; points whose run is missing are left out. */
export function armCurve(config: PipelineConfig, out: string, arm: Pick<Arm, "name" | "init">, checkpoints: readonly number[]): CurvePoint[] {
  if (!config.grpo?.curve) return [];
  const layout = evidenceLayout(out);
  const last = Number(config.grpo.flags["max-steps"]);
  const points = [{ label: initLabel(config, arm), step: 0 }, ...checkpoints.map((step) => ({ label: arm.name, step })), { label: arm.name, step: last }];
  return points.flatMap(({ label, step }) => {
    const run = runsUnder(layout.curve(label, step))[0];
    return run ? [curvePoint(run, step)] : [];
  });
}

/** The arms and the baseline with their kind and starting model, in config order. */
export function armList(config: PipelineConfig): Array<Pick<ArmEvidence, "name" | "kind" | "init" | "seed" | "transform">> {
  const arms = (config.grpo?.arms ?? []).map((arm) => ({
    name: arm.name,
    kind: armKind(arm),
    init: initLabel(config, arm),
    seed: arm.seed,
    transform: arm.transform,
  }));
  const baseline = config.baseline;
  return baseline ? [...arms, { name: baseline.name, kind: "baseline" as const, init: "base", seed: baseline.seed, transform: null }] : arms;
}

/**
 * The report over the evaluated models' suite runs in config order. The first is every comparison's baseline:
 * pre (the SFT model) when there are arms, else the base model when it was evaluated (so the card reads SFT vs base).
 */
export function pipelineReport(config: PipelineConfig, out: string, labels: readonly string[]): Report {
  const layout = evidenceLayout(out);
  const before = config.eval.base ? (config.grpo ? ["pre", "base"] : ["base", "pre"]) : ["pre"];
  const paths = [...before, ...labels].map((label) => layout.suiteRuns(evalStageOf(label), label));
  return buildReport(loadInputs(paths.filter((path) => existsSync(path))));
}

export interface FailureTable {
  benchmark: string;
  categories: string[];
  /** Per model: scored episodes and, per category, how many fell in it. */
  models: Array<{ label: string; episodes: number; counts: Record<string, number> }>;
}

/** Failure categories of each suite row whose environment defines them, per model (pre and every arm). */
export function failureTables(out: string, labels: readonly string[]): FailureTable[] {
  const layout = evidenceLayout(out);
  const tables = new Map<string, FailureTable>();
  for (const label of labels) {
    for (const run of runsUnder(layout.suiteRuns(evalStageOf(label), label))) {
      const failures = failureCounts(run);
      if (!failures) continue;
      const benchmark = run.metadata.benchmark;
      const table = tables.get(benchmark) ?? tables.set(benchmark, { benchmark, categories: failures.categories, models: [] }).get(benchmark)!;
      table.models.push({ label, episodes: failures.episodes, counts: failures.counts });
    }
  }
  return [...tables.values()];
}

export interface SampledResult {
  benchmark: string;
  label: string;
  n: number;
  samples: number;
  temperature: number;
  reward: Interval;
  /** The share of tasks where at least one of the k samples earned full reward (reward ≥ 1), with its bootstrap CI. */
  pass_at_k: Interval;
  /** Against pre on the same tasks (absent for pre): paired difference of the per-task mean reward. */
  delta?: { delta: number; ci_low: number; ci_high: number; p: number };
}

/** Per task, pass@k with k = the samples asked for (fewer when some errored): a sample passes with full reward. */
function passShares(run: LoadedRun, samples: number): number[] {
  const byTask = new Map<string, { n: number; correct: number }>();
  for (const result of run.results) {
    const reward = result.status === "scored" ? rewardOf(result) : undefined;
    if (reward === undefined) continue;
    const key = String(result.example_id ?? result.id);
    const entry = byTask.get(key) ?? byTask.set(key, { n: 0, correct: 0 }).get(key)!;
    entry.n++;
    if (reward >= 1) entry.correct++;
  }
  return inTaskOrder(byTask).map(({ n, correct }) => passAtK(n, correct, Math.min(samples, n)));
}

/** Sampled evaluations of each model: mean reward and pass@k per row, and each model's difference from pre. */
export function sampledResults(config: PipelineConfig, out: string, labels: readonly string[]): SampledResult[] {
  if (!config.sampled) return [];
  const { samples, temperature } = config.sampled;
  const layout = evidenceLayout(out);
  const found: SampledResult[] = [];
  const preRewards = new Map<string, number[]>();
  for (const label of labels) {
    for (const run of runsUnder(layout.sampled(evalStageOf(label), label))) {
      const benchmark = run.metadata.benchmark;
      const rewards = taskMeans(run, rewardOf);
      const passes = passShares(run, samples);
      const entry: SampledResult = {
        benchmark,
        label,
        n: rewards.length,
        samples,
        temperature,
        reward: interval(rewards, `sampled/${benchmark}/${label}`),
        pass_at_k: interval(passes, `sampled-pass/${benchmark}/${label}`),
      };
      const pre = preRewards.get(benchmark);
      if (label === "pre") preRewards.set(benchmark, rewards);
      else if (pre && pre.length === rewards.length) {
        const difference = compareTasks(pre, rewards, { seed: `sampled/${benchmark}/${label}`, binary: false });
        entry.delta = { delta: difference.delta, ci_low: difference.low, ci_high: difference.high, p: difference.pValue };
      }
      found.push(entry);
    }
  }
  return found;
}
