import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { replayReplies, type ReplyReplay } from "./replies.ts";

const fixtures = join(import.meta.dirname, "../../../test/fixtures");
interface GoldenRecord {
  task: string;
  num_dists: number;
  seed: number;
  text0: string;
  steps: Array<{ action: string; reward: number; terminated: boolean; truncated: boolean; text: string }>;
  episode_return: number;
}
const golden = readFileSync(join(fixtures, "babyai/golden_episodes.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as GoldenRecord);
const cot = JSON.parse(readFileSync(join(fixtures, "balrog/cot_parse_cases.json"), "utf8")) as {
  cot_suffix: { text: string };
  cases: Array<{
    id: string;
    reply: string;
    parsed_string: string;
    valid: boolean;
    executed_action: string;
    failed_candidate: string | null;
    feedback_prefix_next_obs: string | null;
  }>;
};

describe("toolgym replay babyai --replies (raw model replies through BALROG's text protocol)", () => {
  it("replays the reference bot's golden episodes written as chain-of-thought replies, text for text", () => {
    for (const record of golden.slice(0, 12)) {
      const replies = record.steps.map((step, position) => `Step ${position + 1}: I reason about the grid.\nACTION: ${step.action}.`);
      const replay = replayReplies({ config: { task: record.task, num_dists: record.num_dists, balrog_agent: "cot" }, seed: record.seed, index: 0, replies });
      const label = `${record.task}/${record.num_dists}/${record.seed}`;
      assert.equal(replay.steps.length, record.steps.length, label);
      assert.ok(replay.steps[0]!.prompt.at(-1)!.content!.startsWith(`Current Observation:\n${record.text0}\n\n`), label);
      record.steps.forEach((step, position) => {
        const got = replay.steps[position]!;
        assert.deepEqual(
          [got.parsed, got.valid, got.action, got.observation, got.terminated, got.truncated],
          [step.action, true, step.action, step.text, step.terminated, step.truncated],
          `${label} step ${position + 1}`,
        );
        assert.ok(Math.abs(got.reward - step.reward) < 5e-7, `${label} step ${position + 1} reward`);
      });
      assert.ok(Math.abs(replay.episode_return - record.episode_return) < 5e-7, label);
      assert.equal(replay.done, true);
      assert.equal(replay.progression, 1);
      assert.equal(replay.next_prompt, null);
    }
  });

  it("gives BALROG's parse, validity, executed action, failed candidate and notice for every reference reply", () => {
    for (const example of cot.cases) {
      const replay = replayReplies({ config: { task: "putnext", balrog_agent: "cot" }, seed: 11, index: 0, replies: [example.reply, "ACTION: turn right"] });
      const first = replay.steps[0]!;
      assert.deepEqual(
        [first.reply, first.parsed, first.valid, first.action, first.failed_candidate, first.feedback],
        [example.reply, example.parsed_string, example.valid, example.executed_action, example.failed_candidate, example.feedback_prefix_next_obs],
        example.id,
      );
      if (example.feedback_prefix_next_obs !== null) {
        assert.ok(first.observation.startsWith(example.feedback_prefix_next_obs), example.id);
        const current = replay.steps[1]!.prompt.at(-1)!.content as string;
        assert.ok(current.startsWith(`Current Observation:\n${example.feedback_prefix_next_obs}`), example.id);
      }
      assert.deepEqual(replay.failed_candidates, example.failed_candidate === null ? [] : [example.failed_candidate], example.id);
      // The plan is the reply as BALROG's client returns it, Python-stripped: like JS trim here, except that
      // Python also strips the trailing U+0085 of cot111.
      const plan = example.id === "cot111" ? "ACTION: go forward" : example.reply.trim();
      const assistants = replay.steps[1]!.prompt.filter((message) => message.role === "assistant").map((message) => message.content);
      // An empty parsed string is not recorded (BALROG's `if prev_action:`), so its plan is not shown either.
      assert.deepEqual(assistants, example.parsed_string === "" ? [] : [`Previous plan:\n${plan}`], example.id);
    }
  });

  it("stops at the end of the episode, counts unused replies and shows the naive agent's prompt", () => {
    const replies = Array.from({ length: 70 }, () => "turn left");
    const replay = replayReplies({ config: { task: "goto" }, seed: 5, index: 0, replies });
    assert.equal(replay.balrog_agent, "naive");
    assert.equal(replay.max_steps, 64);
    assert.equal(replay.steps.length, 64);
    assert.equal(replay.unused_replies, 6);
    assert.deepEqual([replay.done, replay.terminated, replay.truncated, replay.progression, replay.episode_return], [true, false, true, 0, 0]);
    assert.match(replay.steps[0]!.prompt.at(-1)!.content as string, /\n\nYou always have to output one of the above actions at a time and no other text\./);
    // 16 steps in, the window of 32 events starts with an assistant turn.
    assert.equal(replay.steps[16]!.prompt.length, 33);
    assert.deepEqual(replay.steps[16]!.prompt[1], { role: "assistant", content: "turn left" });
    const open = replayReplies({ config: { task: "goto" }, seed: 5, index: 0, replies: ["turn left"] });
    assert.equal(open.done, false);
    assert.equal(open.next_prompt!.length, 4);
  });

  it("runs from the command line and rejects bad input with one line and exit code 2", () => {
    const directory = mkdtempSync(join(tmpdir(), "toolgym-babyai-replies-"));
    try {
      const bin = join(import.meta.dirname, "../../../bin/toolgym.js");
      const run = (args: string[]) => spawnSync(process.execPath, [bin, "replay", "babyai", ...args], { encoding: "utf8", timeout: 120_000 });
      const file = join(directory, "replies.json");
      writeFileSync(file, JSON.stringify(["I should turn. ACTION: turn left", "ACTION: Go Forward"]));
      const result = run(["--config", '{"task":"goto","balrog_agent":"cot"}', "--seed", "3", "--replies", file, "--json"]);
      assert.equal(result.status, 0, result.stderr);
      const output = JSON.parse(result.stdout) as ReplyReplay;
      assert.deepEqual(
        output.steps.map((step) => [step.reply, step.parsed, step.valid, step.action]),
        [
          ["I should turn. ACTION: turn left", "turn left", true, "turn left"],
          ["ACTION: Go Forward", "Go Forward", false, "go forward"],
        ],
      );
      assert.equal(output.done, false);
      assert.deepEqual(output.failed_candidates, ["Go Forward"]);

      writeFileSync(file, JSON.stringify(["turn left", 3]));
      const bad = run(["--seed", "3", "--replies", file, "--json"]);
      assert.equal(bad.status, 2);
      assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);
      assert.match(bad.stderr, /--replies item 2 must be a string/);
      const tools = run(["--config", '{"protocol":"tools"}', "--replies", file]);
      assert.equal(tools.status, 2);
      assert.match(tools.stderr, /replays the text protocol/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
