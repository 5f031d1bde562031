import type { Episode } from "../../core/index.ts";

/** An episode's members, with its end state read through functions over the environment's own state. */
export type EpisodeParts = Omit<Episode, "done" | "truncated"> & {
  isDone(): boolean;
  isTruncated?(): boolean;
};

/**
 * The `Episode` of `parts`, whose `done` and `truncated` getters live on one prototype. Why not an object
 * literal with `get done()` over the closure's state: every such literal has accessor functions of its own,
 * so V8 gives each episode its own hidden class, and a process that starts thousands of episodes a second
 * (the environment server) spent several milliseconds in each young-generation GC because of it.
 */
class EpisodeFromParts {
  constructor(parts: EpisodeParts) {
    Object.assign(this, parts);
  }

  get done(): boolean {
    return (this as unknown as EpisodeParts).isDone();
  }

  get truncated(): boolean {
    const isTruncated = (this as unknown as EpisodeParts).isTruncated;
    return isTruncated ? isTruncated() : false;
  }
}

export function episodeFromParts(parts: EpisodeParts): Episode {
  return new EpisodeFromParts(parts) as unknown as Episode;
}
