import type { ResultRecord } from "../../runs/schemas.ts";
import { bootstrapMean, inTaskOrder, mean } from "../../statistics/statistics.ts";
import type { LoadedRun } from "./load.ts";

import type { BreakdownSpec } from "../../core/index.ts";

export interface BreakdownCell {
  model: string;
  /** Mean over the group's tasks with its 95% bootstrap CI, per metric. */
  metrics: Record<string, { mean: number; low: number; high: number }>;
  /** Scored tasks in the group. */
  n: number;
}

/** The value of the group of all episodes, listed after the per-value groups when there are several. */
export const ALL_GROUP = "all tasks";

export interface BreakdownGroup {
  /** The diagnostics value shared by the group's episodes (e.g. `goto`), or `ALL_GROUP`. */
  value: string;
  cells: BreakdownCell[];
}

export interface Breakdown {
  key: string;
  metrics: string[];
  /** Protocols (text / tools) that produced the episodes, from their diagnostics or the run's metadata. */
  protocols: string[];
  groups: BreakdownGroup[];
}

function diagnostics(result: ResultRecord): Record<string, unknown> {
  const trajectory = result.info?.trajectory as { diagnostics?: Record<string, unknown> } | null | undefined;
  return trajectory?.diagnostics ?? {};
}

/** The run's protocols: each episode's `diagnostics.protocol`, else `metadata.env.protocol`. */
function runProtocols(run: LoadedRun): string[] {
  const found = new Set<string>();
  for (const result of run.results) {
    const protocol = diagnostics(result).protocol;
    if (typeof protocol === "string") found.add(protocol);
  }
  if (found.size === 0 && run.metadata.env.protocol) found.add(run.metadata.env.protocol);
  return [...found].sort();
}

/**
 * Groups each run's scored episodes by `diagnostics[spec.key]` and gives every group's per-metric mean
 * (over tasks, samples averaged first) with its bootstrap CI. Descriptive only: sub-rows are not tested,
 * so they do not enter the Holm family of the benchmark rows. Groups appear in order of their first task,
 * then (when there are several) the group of all episodes: BALROG's overall progression.
 */
export function buildBreakdown(benchmark: string, runs: readonly LoadedRun[], spec: BreakdownSpec): Breakdown | undefined {
  const firstIndex = new Map<string, number>();
  const perRun = runs.map((run) => {
    const groups = new Map<string, Map<string, Map<string, number[]>>>();
    for (const result of run.results) {
      const value = diagnostics(result)[spec.key];
      if (result.status !== "scored" || (typeof value !== "string" && typeof value !== "number")) continue;
      const group = String(value);
      const example = Number(result.example_id);
      firstIndex.set(group, Math.min(firstIndex.get(group) ?? Infinity, Number.isFinite(example) ? example : Infinity));
      for (const name of [group, ALL_GROUP]) {
        const byMetric = groups.get(name) ?? groups.set(name, new Map()).get(name)!;
        for (const metric of spec.metrics) {
          const number = result.metrics?.[metric];
          if (typeof number !== "number" || !Number.isFinite(number)) continue;
          const byTask = byMetric.get(metric) ?? byMetric.set(metric, new Map()).get(metric)!;
          const key = String(result.example_id ?? result.id);
          (byTask.get(key) ?? byTask.set(key, []).get(key)!).push(number);
        }
      }
    }
    return { run, groups };
  });
  if (firstIndex.size === 0) return undefined;
  const order = [...firstIndex].sort(([a, left], [b, right]) => left - right || a.localeCompare(b)).map(([group]) => group);
  if (order.length > 1) order.push(ALL_GROUP);
  return {
    key: spec.key,
    metrics: spec.metrics,
    protocols: [...new Set(runs.flatMap(runProtocols))].sort(),
    groups: order.map((value) => ({
      value,
      cells: perRun.map(({ run, groups }) => {
        const label = run.metadata.model.label;
        const byMetric = groups.get(value);
        const tasks = new Set<string>();
        const metrics: BreakdownCell["metrics"] = {};
        for (const metric of spec.metrics) {
          const byTask = byMetric?.get(metric) ?? new Map<string, number[]>();
          for (const task of byTask.keys()) tasks.add(task);
          const interval = bootstrapMean(
            inTaskOrder(byTask).map((values) => mean(values)),
            // The all-tasks group uses the benchmark row's seed, so its CI matches that row's where they share a metric.
            { seed: value === ALL_GROUP ? `${benchmark}/${metric}/${label}` : `${benchmark}/${spec.key}=${value}/${metric}/${label}` },
          );
          metrics[metric] = { mean: interval.mean, low: interval.low, high: interval.high };
        }
        return { model: label, metrics, n: tasks.size };
      }),
    })),
  };
}
