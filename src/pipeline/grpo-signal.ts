/**
 * What TRL's GRPOTrainer logs each step, read from the lines python/train_grpo.py prints
 * (`TOOLGYM_METRICS {json}`, one per `on_log`), and the no-signal check: when every group had zero reward
 * variance in each of the first K steps, GRPO's advantages are all zero and no gradient flows, so the
 * run is stopped instead of spending its budget.
 */
export const METRICS_PREFIX = "TOOLGYM_METRICS ";

export type StepLog = Record<string, number | string | null>;

/** The step's metrics when the line is a metrics line of a training step (one with a reward). */
export function parseMetricsLine(line: string): StepLog | undefined {
  const start = line.indexOf(METRICS_PREFIX);
  if (start < 0) return undefined;
  try {
    const value = JSON.parse(line.slice(start + METRICS_PREFIX.length)) as unknown;
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    const log = value as StepLog;
    // the end-of-training log repeats the last step's averages next to train_runtime: not a step
    return typeof log.reward === "number" && !("train_runtime" in log) ? log : undefined;
  } catch {
    return undefined;
  }
}

export interface GrpoSummary {
  steps: number;
  reward_first: number | null;
  reward_last: number | null;
  frac_reward_zero_std_mean: number | null;
  tool_calls_per_completion: number | null;
}

function mean(values: number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
}

function numbers(steps: readonly StepLog[], key: string): number[] {
  return steps.map((step) => step[key]).filter((value): value is number => typeof value === "number" && Number.isFinite(value));
}

/** The summary.json `grpo` block from the training steps' logs (TRL's `reward`, `frac_reward_zero_std`, `tools/call_frequency`). */
export function summariseGrpo(steps: readonly StepLog[]): GrpoSummary {
  const rewards = numbers(steps, "reward");
  return {
    steps: steps.length,
    reward_first: rewards[0] ?? null,
    reward_last: rewards.at(-1) ?? null,
    frac_reward_zero_std_mean: mean(numbers(steps, "frac_reward_zero_std")),
    tool_calls_per_completion: mean(numbers(steps, "tools/call_frequency")),
  };
}

/** Collects step logs; `verdict()` says when the first K steps carried no learning signal. */
export class GrpoSignalMonitor {
  readonly steps: StepLog[] = [];

  constructor(private readonly firstSteps: number) {}

  /** Feeds one output line; returns the no-signal message once the first K steps are all zero-variance. */
  feed(line: string): string | undefined {
    const step = parseMetricsLine(line);
    if (!step) return undefined;
    const previous = this.steps.at(-1);
    if (previous && step.step !== undefined && previous.step === step.step) this.steps[this.steps.length - 1] = step;
    else this.steps.push(step);
    return this.verdict();
  }

  verdict(): string | undefined {
    const k = this.firstSteps;
    if (k <= 0 || this.steps.length !== k) return undefined;
    const zeroStd = numbers(this.steps, "frac_reward_zero_std");
    if (zeroStd.length < k || zeroStd.some((value) => value < 1)) return undefined;
    const summary = summariseGrpo(this.steps);
    const calls = summary.tool_calls_per_completion === null ? "not logged" : summary.tool_calls_per_completion.toFixed(2);
    return (
      `GRPO got no learning signal: every group had zero reward variance in each of the first ${k} steps ` +
      `(reward mean ${summary.reward_last?.toFixed(3)}, tool calls per completion ${calls}), so every advantage is 0. ` +
      "Make the starting model partially competent (more SFT), raise num-generations or temperature, or make the tasks easier; " +
      "grpo.noSignalSteps: 0 turns this check off"
    );
  }
}
