import type { BenchmarkSummary, SummaryEpisode, SummarySpec, Trajectory } from "../../core/index.ts";
import { mean, passHatIntervals } from "../../statistics/statistics.ts";

/** The reward error of an episode whose evaluation raised in tau2's evaluator (tau2's runner: an infrastructure error). */
export const EVALUATION_ERROR = "TAU2_EVALUATION_ERROR";

/** tau2's `DEFAULT_RETRY_ATTEMPTS` (`config.py`), `RunConfig.max_retries`: re-runs of a simulation that raised. */
export const TAU2_MAX_RETRIES = 3;

/**
 * Why tau2's `run_with_retry` would have caught an exception from this simulation (undefined: none): the
 * run raised (an agent, user or judge call failed, the agent's arguments were not JSON, an empty message) or
 * tau2's evaluation raised.
 */
export function simulationRaised(trajectory: Trajectory): string | undefined {
  if (trajectory.termination === "errored") {
    const error = trajectory.errors[0];
    return error ? `${error.code}: ${error.message}` : "errored";
  }
  const evaluation = trajectory.reward?.errors.find((error) => error.code === EVALUATION_ERROR);
  return evaluation ? `${evaluation.code}: ${evaluation.message}` : undefined;
}

/** tau2's success test (`metrics/agent_metrics.py`, `is_successful`): the reward is within 1e-6 of 1. */
export function isSuccessful(reward: number): boolean {
  return 1 - 1e-6 <= reward && reward <= 1 + 1e-6;
}

function fixed(value: number): string {
  return value.toFixed(3);
}

/**
 * A run's numbers as tau2's `compute_metrics` gives them: `avg_reward` over every simulation and pass^k
 * for k = 1..K (K: the fewest trials any task has), each with a 95% bootstrap CI over tasks. A trial whose
 * reward basis was not wholly computed (NL_ASSERTION without a judge) never counts as a success, and
 * `avg_reward` is then not computed (null): the block says so in `basis` and `not_computed`.
 */
export function summarizeTau2(episodes: readonly SummaryEpisode[]): BenchmarkSummary {
  const byTask = new Map<number, { trials: number; successes: number }>();
  const notComputed: Record<string, number> = {};
  let partial = 0;
  let infrastructure = 0;
  const rewards: number[] = [];
  // tau2's retry rule (eval re-runs a simulation that raised): how many were re-run, how often, and why.
  let retried = 0;
  let reruns = 0;
  const retryReasons: Record<string, number> = {};
  for (const episode of episodes) {
    const attemptErrors = episode.diagnostics?.attempt_errors;
    if (Array.isArray(attemptErrors) && attemptErrors.length > 0) {
      retried++;
      reruns += Math.min(attemptErrors.length, TAU2_MAX_RETRIES);
      for (const reason of attemptErrors) {
        const code = String(reason).split(":")[0] as string;
        retryReasons[code] = (retryReasons[code] ?? 0) + 1;
      }
    }
  }
  for (const episode of episodes) {
    const reward = episode.metrics.reward;
    if (typeof reward !== "number") continue;
    // tau2's runner retries a simulation whose evaluation raises and then records an infrastructure error,
    // which its metrics leave out; toolgym scores it 0 but leaves it out here too.
    if (episode.rewardErrors?.includes(EVALUATION_ERROR)) {
      infrastructure++;
      continue;
    }
    rewards.push(reward);
    const missing = episode.notComputed ?? [];
    for (const name of missing) notComputed[name] = (notComputed[name] ?? 0) + 1;
    const incomplete = missing.length > 0 || episode.metrics.partial === 1;
    if (incomplete) partial++;
    const key = episode.exampleId ?? byTask.size;
    const task = byTask.get(key) ?? { trials: 0, successes: 0 };
    task.trials++;
    if (!incomplete && isSuccessful(reward)) task.successes++;
    byTask.set(key, task);
  }
  const tasks = [...byTask.entries()].sort(([a], [b]) => a - b).map(([, task]) => task);
  const intervals = passHatIntervals(tasks, { seed: "tau2" });
  const passHat = Object.fromEntries(Object.entries(intervals).map(([k, interval]) => [k, interval.mean]));
  const passHatCi = Object.fromEntries(Object.entries(intervals).map(([k, interval]) => [k, [interval.low, interval.high]]));
  const avgReward = partial === 0 && rewards.length > 0 ? mean(rewards) : null;
  const ks = Object.keys(intervals);
  const shown = ks.map(
    (k) => `pass^${k} ${fixed(passHat[k] as number)} [${fixed((passHatCi[k] as number[])[0] as number)}, ${fixed((passHatCi[k] as number[])[1] as number)}]`,
  );
  const trials = tasks.length > 0 ? Math.max(...tasks.map((task) => task.trials)) : 0;
  const basisText =
    partial > 0
      ? `; ${Object.entries(notComputed)
          .map(([name, count]) => `${name} not computed in ${count} of ${rewards.length} trials`)
          .join(", ")}: those trials are failures in pass^k and avg_reward is not computed`
      : "";
  // Which way the agent reached the customer: tau2's leaderboard protocol, or toolgym's customer-as-a-tool training protocol.
  const viaTool = episodes.some((episode) => episode.diagnostics?.customer === "tool");
  return {
    protocol: viaTool ? "customer_tool" : "leaderboard",
    num_trials: trials,
    tasks: tasks.length,
    simulations: rewards.length,
    avg_reward: avgReward,
    pass_hat: passHat,
    pass_hat_ci: passHatCi,
    basis: partial > 0 ? "partial" : "full",
    partial_simulations: partial,
    not_computed: notComputed,
    infrastructure_errors: infrastructure,
    retried_simulations: retried,
    retries: reruns,
    retry_reasons: retryReasons,
    text: `${shown.join(" · ")} (${tasks.length} tasks × ${trials} trials; avg_reward ${avgReward === null ? "not computed" : fixed(avgReward)}${basisText}${infrastructure > 0 ? `; ${infrastructure} simulations left out: tau2's evaluator raised in all ${TAU2_MAX_RETRIES + 1} attempts, an infrastructure error in tau2` : ""}${
      retried > 0
        ? `; ${retried} simulations re-run (${reruns} re-runs, tau2's retry rule; ${Object.entries(retryReasons)
            .map(([code, count]) => `${code} ×${count}`)
            .join(", ")})`
        : ""
    }${viaTool ? "; protocol: the customer as a tool (toolgym's training protocol), not tau2's leaderboard protocol" : ""})`,
  };
}

export const tau2Summary: SummarySpec = { key: "tau2", label: "τ²-bench", summarize: summarizeTau2 };
