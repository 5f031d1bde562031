import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRandom } from "../../core/index.ts";
import { babyaiPolicies } from "./policies/index.ts";
import { nextAction } from "./policies/planner.ts";
import { runEpisode } from "../../rollout/run-episode.ts";
import { babyaiEnvironment, levelSeedWords } from "./index.ts";
import { BABYAI_TASKS, MixedTrainLocalLevel } from "./level.ts";

/** The reference BabyAI bot's mean return over 200 seeds per task (spec §6). */
const REFERENCE_RETURN: Record<number, Record<string, number>> = {
  0: { goto: 0.931, pickup: 0.917, open: 0.906, putnext: 0.927, pick_up_seq_go_to: 0.919 },
  8: { goto: 0.923, pickup: 0.909, open: 0.889, putnext: 0.917, pick_up_seq_go_to: 0.91 },
};

const oracle = babyaiPolicies.find((policy) => policy.id === "oracle");

describe("babyai oracle", () => {
  for (const numDists of [0, 8]) {
    it(`solves 200 seeds per task with num_dists=${numDists}, mean return within 0.02 of the reference bot`, () => {
      for (const task of BABYAI_TASKS) {
        let total = 0;
        for (let seed = 0; seed < 200; seed++) {
          const level = new MixedTrainLocalLevel(task, numDists);
          level.reset(seed);
          while (!level.terminated && !level.truncated) level.step(nextAction(level));
          assert.ok(level.lastReward > 0, `${task} seed ${seed} not solved`);
          total += level.lastReward;
        }
        const mean = total / 200;
        assert.ok(Math.abs(mean - (REFERENCE_RETURN[numDists]?.[task] as number)) <= 0.02, `${task}: mean return ${mean.toFixed(3)}`);
      }
    });
  }

  for (const protocol of ["text", "tools"] as const) {
    it(`plays through the rollout with the ${protocol} protocol and records it in the diagnostics`, async () => {
      const config = babyaiEnvironment.configSchema.parse({ protocol });
      for (let index = 0; index < 10; index++) {
        const task = babyaiEnvironment.generate({ split: "eval", seed: 5, index, config });
        const agent = oracle?.create({ task, random: createRandom("test", index) });
        assert.ok(agent);
        const trajectory = await runEpisode({ env: babyaiEnvironment, split: "eval", seed: 5, index, config, agent, task });
        assert.equal(trajectory.termination, "finished");
        assert.equal(trajectory.diagnostics.protocol, protocol);
        assert.equal(trajectory.diagnostics.task, BABYAI_TASKS[index % 5]);
        assert.equal(trajectory.reward?.components.success, 1);
        assert.equal(trajectory.reward?.total, trajectory.diagnostics.episode_return);
        assert.equal(trajectory.formatErrors.count, 0);
      }
    });
  }
});

describe("babyai episodes", () => {
  it("maps (split, seed, index) to numpy seeds: index 0 is the seed itself", () => {
    assert.deepEqual(levelSeedWords("eval", 7, 0), [7]);
    assert.deepEqual(levelSeedWords("eval", 7, 3), [7, 3]);
    assert.deepEqual(levelSeedWords("train", 7, 0), [7, 0, 1]);
    assert.throws(() => levelSeedWords("eval", -1, 0), /seed -1/);
  });

  it("cycles BALROG's five tasks over indices by default", () => {
    const config = babyaiEnvironment.configSchema.parse({});
    const tasks = Array.from({ length: 10 }, (_, index) => babyaiEnvironment.generate({ split: "eval", seed: 0, index, config }).task);
    assert.deepEqual(tasks, [...BABYAI_TASKS, ...BABYAI_TASKS]);
  });

  it("shows the model BALROG's prompt and handles invalid output with the default action and the notice", async () => {
    const config = babyaiEnvironment.configSchema.parse({ task: "goto" });
    const task = babyaiEnvironment.generate({ split: "eval", seed: 0, index: 0, config });
    const seen: string[][] = [];
    const replies = ["Let me think.", "go forward", "turn right"];
    const agent = {
      id: "probe",
      act: async (request: { messages: Array<{ content: string | null }> }) => {
        seen.push(request.messages.map((message) => message.content ?? ""));
        return { message: { role: "assistant" as const, content: replies[seen.length - 1] ?? "" } };
      },
    };
    const trajectory = await runEpisode({ env: babyaiEnvironment, split: "eval", seed: 0, index: 0, config, agent, task });
    assert.equal(seen.length, 3);
    assert.ok((seen[0]?.[1] as string).startsWith("Current Observation:\na wall 6 steps forward"));
    assert.deepEqual(seen[1]?.slice(1, 3), [
      "Observation:\na wall 6 steps forward\na wall 2 steps left\na green key 1 step right and 2 steps forward",
      "Let me think",
    ]);
    assert.ok(
      (seen[1]?.[3] as string).startsWith(
        "Current Observation:\n\n\nYour previous output did not contain a valid action. Defaulted to action: go forward\n\nObservation:\na wall 5 steps forward",
      ),
    );
    assert.equal(trajectory.reward?.components.success, 1);
    assert.equal(trajectory.diagnostics.invalid_actions, 1);
    assert.deepEqual(trajectory.diagnostics.failed_candidates, ["Let me think"]);
    assert.equal(trajectory.formatErrors.count, 1);
  });

  it("ends a hopeless episode at max_steps with return 0", async () => {
    const config = babyaiEnvironment.configSchema.parse({ task: "open" });
    const task = babyaiEnvironment.generate({ split: "eval", seed: 1, index: 0, config });
    const spin = babyaiPolicies.find((policy) => policy.id === "spin_in_place")?.create({ task, random: createRandom("x") });
    assert.ok(spin);
    const trajectory = await runEpisode({ env: babyaiEnvironment, split: "eval", seed: 1, index: 0, config, agent: spin, task });
    assert.equal(trajectory.turns, 128);
    // BALROG's step limit cut the episode: truncated, not finished.
    assert.equal(trajectory.termination, "truncated");
    assert.equal(trajectory.reward?.total, 0);
  });
});
