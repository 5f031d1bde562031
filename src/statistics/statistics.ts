import { createRandom } from "../core/index.ts";

/**
 * The statistics of runs, audits and reports (one implementation, so the CI in a run's summary.json is
 * the CI its report shows): percentile bootstrap intervals of a mean, the paired bootstrap and McNemar's
 * exact test for comparing two models on the same tasks, and Holm's adjustment across comparisons.
 */
export interface Interval {
  mean: number;
  low: number;
  high: number;
  n: number;
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/** Percentile of a sorted array with linear interpolation (numpy's default). */
export function percentile(sorted: ArrayLike<number>, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * fraction;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const weight = position - lower;
  return (sorted[lower] as number) * (1 - weight) + (sorted[upper] as number) * weight;
}

/** Bootstrap resamples for confidence intervals (percentile CIs are stable from ~1,000 on). */
export const INTERVAL_RESAMPLES = 2_000;
/** Bootstrap resamples where the paired bootstrap also gives the p-value (resolution 1e-4). */
export const TEST_RESAMPLES = 10_000;
export const CONFIDENCE = 0.95;

/**
 * Sorted means of `resamples` bootstrap resamples of `values`. The inner loop runs an inlined sfc32
 * generator (seeded from the keyed stream of core/random) over a typed array: 12,576 episodes × 10,000
 * resamples is 1.3e8 draws, so the per-draw cost matters.
 */
export function resampledMeans(values: readonly number[], resamples: number, key: string): Float64Array {
  const n = values.length;
  const data = Float64Array.from(values);
  const seed = createRandom("bootstrap", key);
  let a = Math.floor(seed.next() * 4294967296) | 0;
  let b = Math.floor(seed.next() * 4294967296) | 0;
  let c = Math.floor(seed.next() * 4294967296) | 0;
  let d = Math.floor(seed.next() * 4294967296) | 0;
  const means = new Float64Array(resamples);
  const scale = n / 4294967296;
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const t = (((a + b) | 0) + d) | 0;
      d = (d + 1) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      c = (c + t) | 0;
      sum += data[Math.floor((t >>> 0) * scale)] as number;
    }
    means[r] = sum / n;
  }
  return means.sort();
}

/**
 * Mean with its percentile bootstrap CI, deterministic for a given `seed` (the key of the resampling
 * stream). The order of `values` matters for the resamples: callers pass them in task order.
 */
export function bootstrapMean(values: readonly number[], options: { seed: string | number; resamples?: number; confidence?: number }): Interval {
  const n = values.length;
  const center = mean(values);
  if (n === 0) return { mean: Number.NaN, low: Number.NaN, high: Number.NaN, n };
  const means = resampledMeans(values, options.resamples ?? INTERVAL_RESAMPLES, String(options.seed));
  const alpha = 1 - (options.confidence ?? CONFIDENCE);
  return { mean: center, low: percentile(means, alpha / 2), high: percentile(means, 1 - alpha / 2), n };
}

export interface PairedDifference {
  /** Mean of (treatment − baseline) over paired tasks. */
  delta: number;
  low: number;
  high: number;
  /** Two-sided p-value for "no difference". */
  pValue: number;
  test: "paired bootstrap" | "McNemar exact";
  /** True when no bootstrap resample was as extreme as the observation: `pValue` is then an upper bound. */
  pFloor?: boolean;
  n: number;
  /** McNemar's discordant counts: baseline right / treatment wrong, and the reverse. */
  discordant?: { baselineOnly: number; treatmentOnly: number };
}

/**
 * Paired bootstrap over tasks: resamples the per-task differences with replacement. The CI is the
 * percentile interval of the resampled mean differences; the p-value is the share of resampled means at
 * least as far from the observed mean as the observed mean is from 0 (the null-shifted distribution).
 */
export function pairedBootstrap(baseline: readonly number[], treatment: readonly number[], options: { seed: string; resamples?: number }): PairedDifference {
  if (baseline.length !== treatment.length) throw new RangeError("paired samples must have the same length");
  const n = baseline.length;
  const differences = baseline.map((value, index) => (treatment[index] as number) - value);
  const delta = mean(differences);
  if (n === 0) return { delta: Number.NaN, low: Number.NaN, high: Number.NaN, pValue: Number.NaN, test: "paired bootstrap", n };
  const resamples = options.resamples ?? TEST_RESAMPLES;
  const means = resampledMeans(differences, resamples, `paired/${options.seed}`);
  const observed = Math.abs(delta);
  let extreme = 0;
  for (const resampled of means) if (Math.abs(resampled - delta) >= observed - 1e-12) extreme++;
  const alpha = 1 - CONFIDENCE;
  return {
    delta,
    low: percentile(means, alpha / 2),
    high: percentile(means, 1 - alpha / 2),
    pValue: Math.min(1, (extreme + 1) / (resamples + 1)),
    test: "paired bootstrap",
    ...(extreme === 0 ? { pFloor: true } : {}),
    n,
  };
}

/** log C(n, k) for k = 0..n, built incrementally (exact enough for n in the tens of thousands). */
function logBinomialCoefficients(n: number): Float64Array {
  const logs = new Float64Array(n + 1);
  for (let k = 0; k < n; k++) logs[k + 1] = (logs[k] as number) + Math.log(n - k) - Math.log(k + 1);
  return logs;
}

/** Two-sided exact binomial test of `successes` out of `trials` against p = 0.5 (doubled smaller tail). */
export function binomialTwoSidedHalf(successes: number, trials: number): number {
  if (trials === 0) return 1;
  const k = Math.min(successes, trials - successes);
  const logs = logBinomialCoefficients(trials);
  const base = trials * Math.log(0.5);
  let maximum = -Infinity;
  for (let i = 0; i <= k; i++) maximum = Math.max(maximum, (logs[i] as number) + base);
  let sum = 0;
  for (let i = 0; i <= k; i++) sum += Math.exp((logs[i] as number) + base - maximum);
  return Math.min(1, 2 * Math.exp(maximum + Math.log(sum)));
}

/** McNemar's exact test on paired binary outcomes: a binomial test on the discordant pairs. */
export function mcnemarExact(baseline: readonly number[], treatment: readonly number[]): { baselineOnly: number; treatmentOnly: number; pValue: number } {
  let baselineOnly = 0;
  let treatmentOnly = 0;
  for (let i = 0; i < baseline.length; i++) {
    if (baseline[i] === 1 && treatment[i] === 0) baselineOnly++;
    if (baseline[i] === 0 && treatment[i] === 1) treatmentOnly++;
  }
  return { baselineOnly, treatmentOnly, pValue: binomialTwoSidedHalf(baselineOnly, baselineOnly + treatmentOnly) };
}

export function isBinary(values: readonly number[]): boolean {
  return values.every((value) => value === 0 || value === 1);
}

/**
 * The paired difference for one benchmark metric: bootstrap CI always; the p-value from McNemar's exact
 * test when both sides are binary (EM, success), else from the paired bootstrap.
 */
export function compareTasks(baseline: readonly number[], treatment: readonly number[], options: { seed: string; binary: boolean }): PairedDifference {
  const bootstrap = pairedBootstrap(baseline, treatment, { seed: options.seed, resamples: options.binary ? INTERVAL_RESAMPLES : TEST_RESAMPLES });
  if (!options.binary) return bootstrap;
  const exact = mcnemarExact(baseline, treatment);
  return {
    delta: bootstrap.delta,
    low: bootstrap.low,
    high: bootstrap.high,
    n: bootstrap.n,
    pValue: exact.pValue,
    test: "McNemar exact",
    discordant: { baselineOnly: exact.baselineOnly, treatmentOnly: exact.treatmentOnly },
  };
}

/** Holm's step-down adjustment; NaN p-values are passed through and do not count as hypotheses. */
export function holmAdjust(pValues: readonly number[]): number[] {
  const order = pValues
    .map((value, index) => ({ value, index }))
    .filter((entry) => Number.isFinite(entry.value))
    .sort((a, b) => a.value - b.value);
  const adjusted = pValues.map(() => Number.NaN);
  const m = order.length;
  let running = 0;
  order.forEach((entry, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * entry.value));
    adjusted[entry.index] = running;
  });
  return adjusted;
}

/**
 * The values of a map keyed by task (example id), in task order: numeric keys numerically, others by
 * text. Bootstrap resamples depend on the order of their input, so every caller that computes the CI
 * of a run's tasks (the run summary, the report) orders them this way and gets the same interval.
 */
export function inTaskOrder<V>(byTask: ReadonlyMap<string | number, V>): V[] {
  return [...byTask.keys()].sort((a, b) => Number(a) - Number(b) || String(a).localeCompare(String(b))).map((key) => byTask.get(key) as V);
}

/** The binomial coefficient C(n, k) as a float (exact while it stays below 2^53, as it does for trial counts). */
function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let result = 1;
  for (let i = 1; i <= Math.min(k, n - k); i++) result = (result * (n - i + 1)) / i;
  return Math.round(result);
}

/**
 * pass^k of one task (Yao et al., arXiv:2406.12045, as tau2 computes it): the chance that k trials drawn
 * without replacement from its `trials` all succeed, C(successes, k) / C(trials, k).
 */
export function passHatK(trials: number, successes: number, k: number): number {
  if (trials < k) throw new RangeError(`pass^${k} needs at least ${k} trials, got ${trials}`);
  return choose(successes, k) / choose(trials, k);
}

/**
 * pass^1..pass^K over tasks, each the mean of the per-task values with its percentile bootstrap CI over
 * tasks (tasks in the order given). K is the smallest trial count of any task, as tau2 caps it.
 */
export function passHatIntervals(tasks: ReadonlyArray<{ trials: number; successes: number }>, options: { seed: string }): Record<string, Interval> {
  if (tasks.length === 0) return {};
  const maxK = Math.min(...tasks.map((task) => task.trials));
  const intervals: Record<string, Interval> = {};
  for (let k = 1; k <= maxK; k++) {
    const values = tasks.map((task) => passHatK(task.trials, task.successes, k));
    intervals[String(k)] = bootstrapMean(values, { seed: `${options.seed}/pass^${k}` });
  }
  return intervals;
}

/**
 * pass@k of one task from `n` samples of which `correct` succeeded: the chance that k samples drawn without
 * replacement hold at least one success, 1 − C(n−c, k) / C(n, k) (Chen et al. 2021's unbiased estimator).
 */
export function passAtK(n: number, correct: number, k: number): number {
  if (k > n) throw new RangeError(`pass@${k} needs at least ${k} samples, got ${n}`);
  if (n - correct < k) return 1;
  let miss = 1;
  for (let i = n - correct + 1; i <= n; i++) miss *= 1 - k / i;
  return 1 - miss;
}
