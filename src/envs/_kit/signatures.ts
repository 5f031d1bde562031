import type { WatchEpisode } from "../../core/index.ts";

/** The numbers of an episode (components, then numeric diagnostics under them) as a failure classifier's `metrics`. */
export function episodeNumbers(episode: WatchEpisode): Record<string, number> {
  const numbers: Record<string, number> = {};
  for (const [key, value] of Object.entries(episode.diagnostics)) if (typeof value === "number") numbers[key] = value;
  for (const [key, value] of Object.entries(episode.components)) if (typeof value === "number") numbers[key] = value;
  if (typeof episode.total === "number") numbers.reward = episode.total;
  return numbers;
}
