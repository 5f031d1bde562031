import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { after, describe, it } from "node:test";
import { parseConfig } from "../src/core/index.ts";
import { getEnvironment, ENVIRONMENTS } from "../src/envs/registry.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";
import { generatePromptRows, type PromptRow } from "../src/training/prompt-dataset.ts";
import { requirePython } from "./support/qwen3.ts";

/**
 * TRL always passes a row's `prompt` to `reset` and appends what `reset` returns to the prompt's last
 * message. Real GRPO (TRL 1.13, CPU, a tiny random Qwen3) against `toolgym serve`: a `toolgym dataset` row
 * whose prompt was emptied still trains on its task, and a row carrying another task's prompt stops training
 * with a clear error instead of training on the wrong prompt.
 */
const root = resolve(import.meta.dirname, "..");
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The task question as the environment itself phrases it (not through the dataset writer). */
function question(index: number): string {
  const env = getEnvironment("mock");
  const config = parseConfig(env.id, env.configSchema, {});
  const messages = env.start(env.generate({ split: "train", seed: 5, index, config })).messages;
  return messages.at(-1)?.content as string;
}

function writeRows(path: string, rows: PromptRow[]): void {
  writeFileSync(path, `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`);
}

describe("TRL GRPO on rows that cannot lose their task", () => {
  let server: RunningServer | undefined;
  let work: string | undefined;
  after(async () => {
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("an empty prompt trains on the task text; another task's prompt fails with a clear error", { timeout: 15 * 60_000 }, async () => {
    const python = requirePython();
    work = mkdtempSync(join(tmpdir(), "toolgym-trl-task-"));
    server = await startServer({ environments: ENVIRONMENTS, port: 0 });
    const rows: PromptRow[] = [];
    for await (const row of generatePromptRows({ env: getEnvironment("mock"), split: "train", n: 2, seed: 5 })) rows.push(row);
    const empty = rows.map((row) => ({ ...row, prompt: [{ role: "user", content: "" }] }));
    // each row's coordinates with the other row's prompt: what a stale or shuffled dataset looks like
    const stale = [
      { ...rows[0], prompt: rows[1].prompt },
      { ...rows[1], prompt: rows[0].prompt },
    ];
    writeRows(join(work, "empty.jsonl"), empty);
    writeRows(join(work, "stale.jsonl"), stale);
    const run = promisify(execFile);
    await run(python, [join(root, "scripts/make-tiny-qwen3.py"), join(work, "model")], { cwd: root, timeout: 300_000 });
    // asynchronous: the server runs in this process and must keep answering while TRL talks to it
    const result = await run(
      python,
      [
        join(root, "python/tests/grpo_task_prompts.py"),
        join(work, "model"),
        server.url,
        join(work, "empty.jsonl"),
        join(work, "stale.jsonl"),
        join(work, "out"),
      ],
      {
        cwd: root,
        encoding: "utf8",
        timeout: 12 * 60_000,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", TOKENIZERS_PARALLELISM: "false", OMP_NUM_THREADS: "2", TRL_EXPERIMENTAL_SILENCE: "1" },
      },
    );
    const report = JSON.parse(
      result.stdout
        .trim()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .at(-1) as string,
    ) as Json;

    const logged = report.logged_prompts as string[];
    assert.equal(logged.length, 2, "one step: one prompt × 2 generations logged");
    const questions = [question(0), question(1)];
    assert.match(questions[0], /^What is the value of key '\w+'\?$/);
    for (const prompt of logged) {
      assert.ok(
        questions.some((text) => prompt.includes(text)),
        `TRL's logged prompt carries the task: ${JSON.stringify(prompt)}`,
      );
      assert.ok(prompt.includes("You answer questions by calling tools."), "the system instruction is part of the task text");
    }

    assert.equal(report.stale_error?.type, "StaleDatasetError", "training on another task's prompt stops");
    assert.match(report.stale_error.message, /the dataset row's prompt is not the prompt of its task \(mock split='train' seed=5 index=\d\)/);
    assert.match(report.stale_error.message, /regenerate it with `toolgym dataset mock`/);
  });
});
