import { availableParallelism } from "node:os";
import { ThreadJobs } from "../_kit/thread-jobs.ts";
import { MixedTrainLocalLevel, acceptedDrawKnown, levelKey, rememberAcceptedDraw, type BabyAITask } from "./level.ts";

/** One level search: what the worker thread needs to draw a level from its seed. */
export interface LevelSearch {
  task: BabyAITask;
  numDistractors: number;
  levelSeed: number[];
}

/** Draws at most this many levels on the calling thread (about 2 ms); a level needing more is searched on a worker thread. */
const DRAWS_ON_THIS_THREAD = 200;

/** The generator state the accepted draw of a level starts from (run on a worker thread by level-search-worker.ts). */
export function searchLevel(search: LevelSearch): number[] {
  const level = new MixedTrainLocalLevel(search.task, search.numDistractors);
  level.drawLevel(search.levelSeed, Number.POSITIVE_INFINITY);
  return [...level.acceptedState];
}

let threads: ThreadJobs<LevelSearch, number[]> | undefined;
const searching = new Map<string, Promise<void>>();

/**
 * Makes the level of `search` quick to draw: undefined when it already is (remembered, or accepted within
 * DRAWS_ON_THIS_THREAD draws, drawn here), else a promise settled when a worker thread has found its
 * accepted draw and it is remembered. Concurrent searches for one level share one job.
 */
export function prepareLevel(search: LevelSearch): Promise<void> | undefined {
  const key = levelKey(search.task, search.numDistractors, search.levelSeed);
  if (acceptedDrawKnown(key)) return undefined;
  if (new MixedTrainLocalLevel(search.task, search.numDistractors).drawLevel(search.levelSeed, DRAWS_ON_THIS_THREAD)) return undefined;
  let pending = searching.get(key);
  if (!pending) {
    threads ??= new ThreadJobs<LevelSearch, number[]>({
      entry: new URL("./level-search-worker.ts", import.meta.url),
      name: "babyai level search",
      threads: Math.max(1, Math.min(4, availableParallelism() - 1)),
      maxQueued: 64,
      // The slowest of 80 putnext seeds with 16 distractors took 1.6 s on a loaded core: 30 s is never a real level.
      timeoutMilliseconds: 30_000,
    });
    pending = threads.run(search).then(
      (state) => {
        searching.delete(key);
        rememberAcceptedDraw(key, state);
      },
      (error: unknown) => {
        searching.delete(key);
        throw error;
      },
    );
    searching.set(key, pending);
  }
  return pending;
}
