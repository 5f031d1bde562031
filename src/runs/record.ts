import type { JsonValue, Trajectory } from "../core/index.ts";
import type { ResultRecord } from "./schemas.ts";

/** Numeric metrics of an episode: every numeric reward component and diagnostic, plus `reward`. */
export function trajectoryMetrics(trajectory: Trajectory): Record<string, number> {
  const metrics: Record<string, number> = {};
  const reward = trajectory.reward;
  if (!reward) return metrics;
  for (const [name, value] of Object.entries(reward.diagnostics ?? {})) if (typeof value === "number" && Number.isFinite(value)) metrics[name] = value;
  for (const [name, value] of Object.entries(reward.components)) if (typeof value === "number") metrics[name] = value;
  if (typeof reward.total === "number") metrics.reward = reward.total;
  return metrics;
}

/**
 * Reward components the environment could not compute for this episode (null in the breakdown, e.g.
 * tau2's NL_ASSERTION without a judge). They are absent from `metrics`; this list says so explicitly.
 */
export function notComputedComponents(trajectory: Trajectory): string[] {
  const components = trajectory.reward?.components ?? {};
  return Object.keys(components).filter((name) => components[name] === null);
}

/** One results.jsonl record from a finished trajectory. */
export function resultFromTrajectory(options: {
  trajectory: Trajectory;
  promptLength: number;
  sample?: number;
  /** The trial's seed (`toolgym eval --num-trials`); the trial is the sample. */
  trialSeed?: number;
  answer?: string;
  startedAt: string;
  durationMs: number;
}): ResultRecord {
  const { trajectory } = options;
  const sample = options.sample ?? 0;
  const errored = trajectory.termination === "errored" || trajectory.reward === null || trajectory.reward.total === null;
  const firstError = trajectory.errors[0] ?? trajectory.reward?.errors[0];
  const notComputed = notComputedComponents(trajectory);
  return {
    example_id: trajectory.env.index,
    sample,
    trial: sample,
    ...(options.trialSeed !== undefined ? { trial_seed: options.trialSeed } : {}),
    id: `${trajectory.id}#${sample}`,
    task: trajectory.env.id,
    prompt: trajectory.messages.slice(0, options.promptLength) as unknown as JsonValue[],
    completion: trajectory.messages.slice(options.promptLength) as unknown as JsonValue[],
    answer: options.answer ?? "",
    reward: errored ? null : (trajectory.reward?.total ?? null),
    metrics: trajectoryMetrics(trajectory),
    ...(!errored && notComputed.length > 0 ? { not_computed: notComputed } : {}),
    status: errored ? "errored" : "scored",
    error: errored ? (firstError ?? { type: "ToolgymError", code: "REWARD_MISSING", message: "the episode has no reward total", boundary: "reward" }) : null,
    turns: trajectory.turns,
    termination: trajectory.termination,
    format_errors: trajectory.formatErrors.count,
    info: { trajectory: trajectory as unknown as JsonValue, timing: { startedAt: options.startedAt, durationMs: options.durationMs } },
  };
}

/** What a finished episode contributes to a run summary (kept in memory instead of the whole record). */
export interface ResultDigest {
  id: string;
  /** The task index (samples of one task share it). */
  exampleId: number;
  status: "scored" | "errored";
  reward: number | null;
  metrics: Record<string, number>;
  turns: number;
  termination: string;
  formatErrors: number;
  errorCode?: string;
  errorMessage?: string;
  /** Names of the reward components among the metrics (the rest are diagnostics). */
  components: string[];
  /** Reward components that were not computed for this episode (absent from `metrics`). */
  notComputed: string[];
}

export function digestOf(record: ResultRecord): ResultDigest {
  const trajectory = record.info.trajectory as { reward?: { components?: object } | null } | undefined;
  return {
    id: record.id,
    exampleId: record.example_id,
    status: record.status,
    reward: record.reward,
    metrics: record.metrics,
    turns: record.turns,
    termination: record.termination,
    formatErrors: record.format_errors,
    components: Object.keys(trajectory?.reward?.components ?? {}),
    notComputed: record.not_computed ?? [],
    ...(record.error ? { errorCode: record.error.code, errorMessage: record.error.message } : {}),
  };
}
