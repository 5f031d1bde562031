import { createRandom, type AnyEnvironment } from "../core/index.ts";

/**
 * The seed of each trial of a run (`toolgym eval --num-trials K`): the environment's own scheme where it
 * has one (tau2: Python's `random.seed(base)` then one `randint(0, 1000000)` per trial), else toolgym's
 * default: trial t's seed is a 31-bit draw from the keyed stream `trial/<base seed>/<t>`, so adding
 * trials never changes the seeds of the earlier ones.
 */
export function trialSeeds(env: AnyEnvironment, baseSeed: number, numTrials: number): number[] {
  if (env.trialSeeds) return env.trialSeeds(baseSeed, numTrials);
  return Array.from({ length: numTrials }, (_, trial) => createRandom("trial", baseSeed, trial).integer(0, 0x7fffffff));
}

/** True when the environment seeds its trials itself; the model's sampling seed is then the trial's seed, as tau2 sends it. */
export function hasOwnTrialSeeds(env: AnyEnvironment): boolean {
  return typeof env.trialSeeds === "function";
}
