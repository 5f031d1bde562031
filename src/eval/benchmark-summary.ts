import type { JsonValue, SummaryEpisode } from "../core/index.ts";
import type { ResultRecord } from "../runs/schemas.ts";

/** A scored result as an environment's `summarize` hook reads it: metrics, diagnostics, task, trial and what was not computed. */
export function summaryEpisodeOf(result: ResultRecord): SummaryEpisode {
  const trajectory = (result.info as Record<string, JsonValue> | undefined)?.trajectory;
  const diagnostics =
    trajectory && typeof trajectory === "object" && !Array.isArray(trajectory) ? (trajectory as Record<string, JsonValue>).diagnostics : undefined;
  return {
    metrics: result.metrics ?? {},
    ...(diagnostics && typeof diagnostics === "object" && !Array.isArray(diagnostics) ? { diagnostics } : {}),
    exampleId: result.example_id,
    trial: result.trial ?? result.sample,
    notComputed: result.not_computed ?? [],
  };
}
