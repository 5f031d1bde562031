import type { Trajectory } from "../../core/index.ts";

/** BALROG's summary numbers for one group of episodes (`balrog/utils.py`, `collect_and_summarize_results`). */
export interface BabyAISummary {
  episodes: number;
  /** 100 · mean(progression): BALROG's headline number (progression is 1 exactly on success). */
  progression_percentage: number;
  /** 100 · population std(progression) / √n, as BALROG computes it. */
  standard_error: number;
  /** Mean episode return (1 − 0.9·steps/max_steps on success, else 0); BALROG logs it per episode. */
  mean_episode_return: number;
}

export interface BabyAIReport {
  protocols: string[];
  overall: BabyAISummary;
  tasks: Record<string, BabyAISummary>;
}

function summarize(progressions: number[], returns: number[]): BabyAISummary {
  const count = progressions.length;
  const mean = count ? progressions.reduce((sum, value) => sum + value, 0) / count : 0;
  const variance = count ? progressions.reduce((sum, value) => sum + (value - mean) ** 2, 0) / count : 0;
  return {
    episodes: count,
    progression_percentage: 100 * mean,
    standard_error: count ? (100 * Math.sqrt(variance)) / Math.sqrt(count) : 0,
    mean_episode_return: count ? returns.reduce((sum, value) => sum + value, 0) / count : 0,
  };
}

/**
 * Per-task and overall BALROG metrics from babyai trajectories (errored episodes are left out, as in
 * toolgym's other summaries). `protocols` lists which protocol(s) produced the numbers.
 */
export function summarizeBabyAI(trajectories: readonly Trajectory[]): BabyAIReport {
  const groups = new Map<string, { progressions: number[]; returns: number[] }>();
  const all = { progressions: [] as number[], returns: [] as number[] };
  const protocols = new Set<string>();
  for (const trajectory of trajectories) {
    if (trajectory.env.id !== "babyai" || trajectory.termination === "errored") continue;
    const diagnostics = trajectory.diagnostics;
    protocols.add(String(diagnostics.protocol));
    const task = String(diagnostics.task);
    const group = groups.get(task) ?? { progressions: [], returns: [] };
    groups.set(task, group);
    for (const target of [group, all]) {
      target.progressions.push(Number(diagnostics.progression ?? 0));
      target.returns.push(Number(diagnostics.episode_return ?? 0));
    }
  }
  const tasks: Record<string, BabyAISummary> = {};
  for (const [task, group] of [...groups].sort(([a], [b]) => a.localeCompare(b))) tasks[task] = summarize(group.progressions, group.returns);
  return { protocols: [...protocols].sort(), overall: summarize(all.progressions, all.returns), tasks };
}
