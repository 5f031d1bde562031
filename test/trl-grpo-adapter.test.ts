import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { parseConfig } from "../src/core/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { generatePromptRows, type PromptRow } from "../src/training/prompt-dataset.ts";
import { requirePython } from "./support/qwen3.ts";
import { freePort, tinyQwen3Dir } from "./support/tiny-qwen3.ts";

/**
 * Real TRL GRPO (TRL 1.13, CPU, a tiny random Qwen3) through toolgym_trl against `toolgym serve`, one training
 * for two stories (python/tests/grpo_adapter_run.py):
 * - the server restarts while an episode is open (issue 28, item 7): its next tool call raises
 *   `ToolgymSessionLost` saying what to do, `get_reward()` returns None (logged once for the process), and TRL
 *   keeps training through a restart in the middle of a step;
 * - TRL always passes a row's `prompt` to `reset` and appends what `reset` returns to the prompt's last
 *   message: rows whose prompt was emptied still train on their task, and a row carrying another task's
 *   prompt stops training with a clear error instead of training on the wrong prompt.
 */
const root = resolve(import.meta.dirname, "..");
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const SEED = 5;
const ROWS = 4;

/** The task question as the environment itself phrases it (not through the dataset writer). */
function question(index: number): string {
  const env = getEnvironment("mock");
  const config = parseConfig(env.id, env.configSchema, {});
  const messages = env.start(env.generate({ split: "train", seed: SEED, index, config })).messages;
  return messages.at(-1)?.content as string;
}

function writeRows(path: string, rows: PromptRow[]): void {
  writeFileSync(path, `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`);
}

describe("TRL GRPO through toolgym_trl: a server restart mid-run, and rows that cannot lose their task", () => {
  let work: string | undefined;
  let report: Json;
  before(async () => {
    const python = requirePython();
    work = mkdtempSync(join(tmpdir(), "toolgym-trl-grpo-"));
    const rows: PromptRow[] = [];
    for await (const row of generatePromptRows({ env: getEnvironment("mock"), split: "train", n: ROWS, seed: SEED })) rows.push(row);
    writeRows(
      join(work, "empty.jsonl"),
      rows.map((row) => ({ ...row, prompt: [{ role: "user", content: "" }] })),
    );
    // each row's coordinates with the other row's prompt: what a stale or shuffled dataset looks like
    writeRows(join(work, "stale.jsonl"), [
      { ...rows[0]!, prompt: rows[1]!.prompt },
      { ...rows[1]!, prompt: rows[0]!.prompt },
    ]);
    const result = await promisify(execFile)(
      python,
      [
        join(root, "python/tests/grpo_adapter_run.py"),
        tinyQwen3Dir(python),
        join(work, "empty.jsonl"),
        join(work, "stale.jsonl"),
        String(await freePort()),
        join(work, "out"),
        join(root, "bin/toolgym.js"),
      ],
      {
        cwd: root,
        encoding: "utf8",
        timeout: 15 * 60_000,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", TOKENIZERS_PARALLELISM: "false", OMP_NUM_THREADS: "2", TRL_EXPERIMENTAL_SILENCE: "1" },
      },
    );
    report = JSON.parse(
      result.stdout
        .trim()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .at(-1) as string,
    ) as Json;
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("a call after a restart raises ToolgymSessionLost; get_reward() is None; the next reset plays a new session", () => {
    assert.equal(report.direct.error_type, "ToolgymSessionLost");
    assert.equal(report.direct.error_code, "SESSION_UNKNOWN");
    assert.match(report.direct.message, /no longer holds session .* the next reset\(\) starts a new session/);
    assert.equal(report.direct.reward, null);
    assert.equal(report.direct.reward_again, null);
    assert.equal(typeof report.direct.after_reset_reward, "number", "the next reset plays a new session with a reward");
  });

  it("TRL trains on through a restart mid-step: only the episode open across it lost its reward, logged once", () => {
    assert.equal(report.restarts, 2);
    assert.equal(report.steps, 3, "GRPO finished its 3 steps through the restart");
    assert.equal(report.rewards.length, 6, "3 steps × 2 completions asked for a reward");
    assert.equal(report.rewards.filter((reward: number | null) => reward === null).length, 1, "only the episode open across the restart lost its reward");
    for (const reward of report.rewards) if (reward !== null) assert.equal(typeof reward, "number");
    assert.equal(report.lost_logs.length, 1, `logged once: ${JSON.stringify(report.lost_logs)}`);
    assert.match(report.lost_logs[0], /gets no reward \(None\)/);
  });

  it("an empty prompt trains on the task text: every prompt TRL logged carries its task", () => {
    const logged = report.logged_prompts as string[];
    assert.equal(logged.length, 6, "3 steps: one prompt × 2 generations logged each");
    const questions = Array.from({ length: ROWS }, (_, index) => question(index));
    assert.match(questions[0]!, /^What is the value of key '\w+'\?$/);
    for (const prompt of logged) {
      assert.ok(
        questions.some((text) => prompt.includes(text)),
        `TRL's logged prompt carries the task: ${JSON.stringify(prompt)}`,
      );
      assert.ok(prompt.includes("You answer questions by calling tools."), "the system instruction is part of the task text");
    }
  });

  it("another task's prompt stops training with a clear error", () => {
    assert.equal(report.stale_error?.type, "StaleDatasetError", "training on another task's prompt stops");
    assert.match(report.stale_error.message, /the dataset row's prompt is not the prompt of its task \(mock split='train' seed=5 index=\d\)/);
    assert.match(report.stale_error.message, /regenerate it with `toolgym dataset mock`/);
  });
});
