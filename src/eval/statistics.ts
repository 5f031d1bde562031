import { createRandom } from "../core/index.ts";

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
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * fraction;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const weight = position - lower;
  return (sorted[lower] as number) * (1 - weight) + (sorted[upper] as number) * weight;
}

/**
 * Percentile bootstrap confidence interval of the mean. Deterministic for a given `seed`.
 */
export function bootstrapMean(values: readonly number[], options: { resamples?: number; confidence?: number; seed?: string | number } = {}): Interval {
  const n = values.length;
  const center = mean(values);
  if (n === 0) return { mean: Number.NaN, low: Number.NaN, high: Number.NaN, n };
  const resamples = options.resamples ?? 2000;
  const alpha = 1 - (options.confidence ?? 0.95);
  const random = createRandom("bootstrap", options.seed ?? 0);
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[Math.floor(random.next() * n)] as number;
    means[r] = sum / n;
  }
  means.sort();
  return { mean: center, low: percentile(means as unknown as number[], alpha / 2), high: percentile(means as unknown as number[], 1 - alpha / 2), n };
}
