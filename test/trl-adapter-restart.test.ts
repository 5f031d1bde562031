import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { getEnvironment } from "../src/envs/registry.ts";
import { generatePromptRows } from "../src/training/prompt-dataset.ts";
import { requirePython } from "./support/qwen3.ts";

/**
 * The adapter after `toolgym serve` restarts (issue 28, item 7), with real TRL GRPO on CPU (a tiny random Qwen3):
 * the server is killed and started again while an episode is open. Its next tool call raises
 * `ToolgymSessionLost` saying what to do, `get_reward()` returns None (logged once for the process), and TRL
 * keeps training through a restart in the middle of a step.
 */
const root = resolve(import.meta.dirname, "..");
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function freePort(): Promise<number> {
  return new Promise((done) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => done(port));
    });
  });
}

describe("toolgym_trl when the server restarts mid-run", () => {
  let work: string | undefined;
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("raises ToolgymSessionLost on a call, get_reward() is None and logged once, and TRL trains on", { timeout: 15 * 60_000 }, async () => {
    const python = requirePython();
    work = mkdtempSync(join(tmpdir(), "toolgym-trl-restart-"));
    const rows = [];
    for await (const row of generatePromptRows({ env: getEnvironment("mock"), split: "train", n: 4, seed: 7 })) rows.push(row);
    writeFileSync(join(work, "rows.jsonl"), `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`);
    const run = promisify(execFile);
    await run(python, [join(root, "scripts/make-tiny-qwen3.py"), join(work, "model")], { cwd: root, timeout: 300_000 });
    const result = await run(
      python,
      [
        join(root, "python/tests/grpo_server_restart.py"),
        join(work, "model"),
        join(work, "rows.jsonl"),
        String(await freePort()),
        join(work, "out"),
        join(root, "bin/toolgym.js"),
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

    assert.equal(report.direct.error_type, "ToolgymSessionLost");
    assert.equal(report.direct.error_code, "SESSION_UNKNOWN");
    assert.match(report.direct.message, /no longer holds session .* the next reset\(\) starts a new session/);
    assert.equal(report.direct.reward, null);
    assert.equal(report.direct.reward_again, null);
    assert.equal(typeof report.direct.after_reset_reward, "number", "the next reset plays a new session with a reward");

    assert.equal(report.restarts, 2);
    assert.equal(report.steps, 3, "GRPO finished its 3 steps through the restart");
    assert.equal(report.rewards.length, 6, "3 steps × 2 completions asked for a reward");
    assert.equal(report.rewards.filter((reward: number | null) => reward === null).length, 1, "only the episode open across the restart lost its reward");
    for (const reward of report.rewards) if (reward !== null) assert.equal(typeof reward, "number");
    assert.equal(report.lost_logs.length, 1, `logged once: ${JSON.stringify(report.lost_logs)}`);
    assert.match(report.lost_logs[0], /gets no reward \(None\)/);
  });
});
