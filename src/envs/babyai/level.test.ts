import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BABYAI_TASKS, MixedTrainLocalLevel, acceptedDrawKnown, forgetAcceptedDraws, levelKey, rememberAcceptedDraw } from "./level.ts";

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

describe("remembered levels (the draw a slow level was accepted at)", () => {
  const snapshot = (level: MixedTrainLocalLevel) => ({
    mission: level.mission,
    maxSteps: level.maxSteps,
    agent: [level.agentX, level.agentY, level.agentDir],
    cells: level.grid.cells.map((cell) => cell && `${cell.type}:${cell.color}:${cell.isLocked}`),
  });

  // Every task at 14 distractors over 12 seeds: the levels that took 100 draws or more are remembered (6 to
  // 10 of them per task), and a reset from memory (one draw) gives what a reset from the seed alone gives.
  for (const task of BABYAI_TASKS) {
    it(`${task}: a level reset from memory is the level drawn from its seed`, () => {
      let remembered = 0;
      for (let seed = 0; seed < 12; seed++) {
        forgetAcceptedDraws();
        const fromSeed = new MixedTrainLocalLevel(task, 14);
        fromSeed.reset([seed]);
        if (!acceptedDrawKnown(levelKey(task, 14, [seed]))) continue;
        remembered++;
        const fromMemory = new MixedTrainLocalLevel(task, 14);
        fromMemory.reset([seed]);
        assert.deepEqual(snapshot(fromMemory), snapshot(fromSeed), `${task} seed ${seed}`);
        // The same level plays the same: a few steps of each action change both worlds alike.
        for (const action of [2, 0, 2, 3, 1, 2, 4, 5, 2, 3]) {
          fromSeed.step(action);
          fromMemory.step(action);
        }
        assert.deepEqual(snapshot(fromMemory), snapshot(fromSeed), `${task} seed ${seed} after steps`);
      }
      assert.ok(remembered >= 4, `${task}: ${remembered} of 12 levels remembered`);
    });
  }

  it("draws no further than asked, and the level stays unusable rather than half drawn", () => {
    forgetAcceptedDraws();
    const level = new MixedTrainLocalLevel("putnext", 16);
    assert.equal(level.drawLevel([5042], 50), false);
    assert.equal(acceptedDrawKnown(levelKey("putnext", 16, [5042])), false);
    assert.equal(new MixedTrainLocalLevel("putnext", 0).drawLevel([5042], 50), true);
  });
});

describe("the remembered-level bound", () => {
  it("keeps at most 4,096 levels, dropping the oldest first (a client cannot grow it by asking for new seeds)", () => {
    forgetAcceptedDraws();
    const key = (index: number) => levelKey("open", 16, [index]);
    for (let index = 0; index < 4096 + 10; index++) rememberAcceptedDraw(key(index), [index]);
    for (let index = 0; index < 10; index++) assert.equal(acceptedDrawKnown(key(index)), false, `oldest ${index} dropped`);
    for (const index of [10, 2000, 4105]) assert.equal(acceptedDrawKnown(key(index)), true, `${index} kept`);
    rememberAcceptedDraw(key(0), [0]);
    assert.equal(acceptedDrawKnown(key(10)), false, "one more level pushes out the next oldest");
    forgetAcceptedDraws();
  });
});
