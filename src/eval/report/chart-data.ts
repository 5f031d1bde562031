import { digestOf } from "../../runs/record.ts";
import type { ResultRecord } from "../../runs/schemas.ts";
import type { ReportRun } from "./build.ts";

/**
 * Names of the reward components among a run's metrics: the keys of each scored trajectory's
 * `reward.components`. Every other numeric metric is a diagnostic (a count such as tool calls or turns),
 * so the HTML report can give components a fixed [0,1] axis and counts axes of their own.
 */
export function rewardComponentNames(results: readonly ResultRecord[]): string[] {
  const names = new Set<string>();
  for (const result of results) if (result.status === "scored") for (const name of digestOf(result).components) names.add(name);
  return [...names].sort();
}

/** The benchmark's metric names split into reward components and diagnostics counts (the total `reward` is in neither). */
export function splitMetrics(runs: readonly ReportRun[]): { components: string[]; counts: string[] } {
  const components = new Set(runs.flatMap((run) => run.rewardComponents));
  components.delete("reward");
  const all = new Set(runs.flatMap((run) => Object.keys(run.components)));
  all.delete("reward");
  return { components: [...components].sort(), counts: [...all].filter((name) => !components.has(name)).sort() };
}
