import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { TAU2_DEFAULT_SEED, tau2TrialSeeds } from "../src/envs/tau2/trials.ts";

/** CPython's `random.seed(s); [random.randint(0, 1000000) for _ in range(k)]` (fixture written by python3). */
const expected = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures/python-semantics/expected.json"), "utf8")) as {
  randint_0_1000000: { seed: number; values: number[] }[];
};

describe("tau2 trial seeds", () => {
  it("are tau2's runner seeds: random.seed(base), one randint(0, 1000000) per trial", () => {
    for (const { seed, values } of expected.randint_0_1000000) assert.deepEqual(tau2TrialSeeds(seed, values.length), values, `base seed ${seed}`);
    // tau2's default seed 300 gives these first trials (python3 -c "import random; random.seed(300); ...").
    assert.deepEqual(tau2TrialSeeds(TAU2_DEFAULT_SEED, 4), [626729, 373753, 361454, 1567]);
  });

  it("refuses a trial count that is not a positive integer", () => {
    assert.throws(() => tau2TrialSeeds(300, 0), /positive integer/);
  });
});
