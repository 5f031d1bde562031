import { PythonRandom } from "../../python-semantics/index.ts";

/**
 * tau2's per-trial seeds (`runner/batch.py`): `random.seed(config.seed)`, then one
 * `random.randint(0, 1000000)` per trial. Trial k of a run with base seed s runs with the k-th seed.
 */
export function tau2TrialSeeds(baseSeed: number, numTrials: number): number[] {
  if (!Number.isInteger(numTrials) || numTrials <= 0) throw new RangeError(`the number of trials must be a positive integer, got ${numTrials}`);
  const random = new PythonRandom(baseSeed);
  return Array.from({ length: numTrials }, () => random.randint(0, 1_000_000));
}

/** tau2's default base seed (`config.DEFAULT_SEED`). */
export const TAU2_DEFAULT_SEED = 300;
