import type { JsonValue, SummaryEpisode } from "../core/index.ts";
import type { ResultRecord } from "../runs/schemas.ts";

function rewardErrorCodes(trajectory: JsonValue | undefined): string[] {
  const reward = trajectory && typeof trajectory === "object" && !Array.isArray(trajectory) ? trajectory.reward : undefined;
  const errors = reward && typeof reward === "object" && !Array.isArray(reward) ? reward.errors : undefined;
  return Array.isArray(errors)
    ? errors.flatMap((error) => (error && typeof error === "object" && !Array.isArray(error) && typeof error.code === "string" ? [error.code] : []))
    : [];
}

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
    rewardErrors: rewardErrorCodes(trajectory),
  };
}
