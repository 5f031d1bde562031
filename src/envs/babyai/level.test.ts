import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BABYAI_TASKS, MixedTrainLocalLevel } from "./level.ts";

/** The fork's rule, as text: a mission containing one of these substrings is drawn again. */
const EXCLUDED_SUBSTRINGS = ["yellow box", "red key", "red door", "green ball", "grey door"];

describe("MixedTrainLocal level generation", () => {
  // The level checks exclusion on the descriptions' (colour, type) pairs instead of the mission text;
  // over many seeds, no accepted mission may contain an excluded phrase.
  for (const task of BABYAI_TASKS) {
    it(`never accepts a ${task} mission containing an excluded phrase (1,000 seeds, num_dists 8)`, () => {
      const level = new MixedTrainLocalLevel(task, 8);
      for (let seed = 0; seed < 1000; seed++) {
        level.reset(seed);
        const found = EXCLUDED_SUBSTRINGS.find((phrase) => level.mission.includes(phrase));
        assert.equal(found, undefined, `seed ${seed}: "${level.mission}"`);
      }
    });
  }

  it("gives the same level for the same seed after other resets (state fully redrawn in place)", () => {
    const level = new MixedTrainLocalLevel("open", 8);
    level.reset(7);
    const first = {
      mission: level.mission,
      agent: [level.agentX, level.agentY, level.agentDir],
      cells: level.grid.cells.map((cell) => cell && `${cell.type}:${cell.color}`),
    };
    for (let seed = 100; seed < 140; seed++) level.reset(seed);
    level.reset(7);
    assert.deepEqual(
      {
        mission: level.mission,
        agent: [level.agentX, level.agentY, level.agentDir],
        cells: level.grid.cells.map((cell) => cell && `${cell.type}:${cell.color}`),
      },
      first,
    );
  });
});
