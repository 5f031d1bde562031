import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { babyaiEnvironment } from "./index.ts";
import { replayBabyAI, roundLikePython } from "./replay.ts";

const FIXTURE = fileURLToPath(new URL("../../../test/fixtures/babyai/golden_episodes.jsonl", import.meta.url));
interface GoldenRecord {
  task: string;
  num_dists: number;
  seed: number;
  mission: string;
  max_steps: number;
  steps: Array<{ action: string; reward: number; terminated: boolean; truncated: boolean; text: string }>;
  [key: string]: unknown;
}
const records = readFileSync(FIXTURE, "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as GoldenRecord);

describe("golden BALROG/Minigrid episodes (test/fixtures/babyai/golden_episodes.jsonl)", () => {
  it("has the 40 reference episodes", () => assert.equal(records.length, 40));

  it("reproduces every record byte for byte: mission, max_steps, grid, pose, every text, reward and flag", () => {
    for (const record of records) {
      const replayed = replayBabyAI({
        config: { task: record.task, num_dists: record.num_dists },
        seed: record.seed,
        index: 0,
        actions: record.steps.map((step) => step.action),
      });
      const { unused_actions: unused, ...fields } = replayed;
      assert.equal(unused, 0);
      assert.deepEqual(fields, record, `${record.task} num_dists=${record.num_dists} seed=${record.seed}`);
    }
  });

  it("sends the same texts through the text-protocol episode (with BALROG's task/seed mapping)", async () => {
    for (const record of records) {
      const config = babyaiEnvironment.configSchema.parse({ task: record.task, num_dists: record.num_dists });
      const task = babyaiEnvironment.generate({ split: "eval", seed: record.seed, index: 0, config });
      assert.equal(task.mission, record.mission);
      assert.equal(task.max_steps, record.max_steps);
      const episode = babyaiEnvironment.start(task);
      assert.equal(episode.messages[1]?.content, record.text0);
      for (const step of record.steps) {
        const result = (episode.reply as (text: string) => { content: string; done: boolean })(step.action);
        assert.equal(result.content, step.text);
        assert.equal(result.done, step.terminated || step.truncated);
      }
      const reward = await episode.reward({ turnsUsed: record.steps.length, maxTurns: record.max_steps, endedBy: "finished" });
      assert.equal(roundLikePython(reward.total as number), record.episode_return);
      assert.equal(reward.components.progression, 1);
    }
  });

  it("rounds like Python's round(x, 6), exact ties to even", () => {
    assert.equal(roundLikePython(0.7890625), 0.789062);
    assert.equal(roundLikePython(1 - 0.9 * (17 / 128)), 0.880469);
    assert.equal(roundLikePython(0.9578125), 0.957812);
    assert.equal(roundLikePython(0.0078125), 0.007812);
    assert.equal(roundLikePython(0.0234375), 0.023438);
    assert.equal(roundLikePython(0.1234567), 0.123457);
  });
});
