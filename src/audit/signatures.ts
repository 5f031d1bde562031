import type { AnyEnvironment, JsonValue, RewardBreakdown, Trajectory, WatchEpisode } from "../core/index.ts";

/** What the watch records about one scored episode: the outcome component's value and the signatures it shows. */
export interface EpisodeWatch {
  outcome: number | null;
  signatures: string[];
}

/** The watch's record of one scored episode, or undefined when the environment declares no watch or the reward is null. */
export function watchEpisode(env: AnyEnvironment, episode: WatchEpisode, task: unknown): EpisodeWatch | undefined {
  const spec = env.watch;
  if (!spec || typeof episode.total !== "number") return undefined;
  const outcome = episode.components[spec.outcome];
  return {
    outcome: typeof outcome === "number" ? outcome : null,
    signatures: spec.signatures.filter((signature) => signature.test(episode, task)).map((signature) => signature.name),
  };
}

/** A finished trajectory as the signatures read it. */
export function trajectoryWatchEpisode(trajectory: Trajectory): WatchEpisode {
  return episodeFromBreakdown(trajectory.reward, {
    diagnostics: trajectory.diagnostics,
    termination: trajectory.termination,
    formatErrors: trajectory.formatErrors.count,
    turns: trajectory.turns,
  });
}

/** A reward breakdown and how the episode ended as the signatures read them (the episode's diagnostics over the reward's). */
export function episodeFromBreakdown(
  breakdown: RewardBreakdown | null,
  ending: { diagnostics?: Record<string, JsonValue>; termination: string; formatErrors: number; turns: number },
): WatchEpisode {
  return {
    total: breakdown?.total ?? null,
    components: breakdown?.components ?? {},
    diagnostics: { ...(breakdown?.diagnostics ?? {}), ...(ending.diagnostics ?? {}) },
    termination: ending.termination,
    formatErrors: ending.formatErrors,
    turns: ending.turns,
  };
}
