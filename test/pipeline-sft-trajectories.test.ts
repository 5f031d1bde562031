import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { parseConfig } from "../src/core/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { qwen3TokenizerDir, requirePython } from "./support/qwen3.ts";
import { runCli } from "./support/run-cli.ts";
import { runPython } from "./sft-python.ts";

const ROOT = resolve(import.meta.dirname, "..");

describe("toolgym sft trajectories", () => {
  const work = mkdtempSync(join(tmpdir(), "toolgym-sft-trajectories-test-"));
  after(() => rmSync(work, { recursive: true, force: true }));

  it("turns every assistant turn of an oracle run into a row equal to transformers' own rendering with the task's tools", { timeout: 180_000 }, async () => {
    const evaluated = await runCli([
      "eval",
      "--env",
      "search_plan_act",
      "--agent",
      "oracle",
      "--split",
      "train",
      "--n",
      "1",
      "--out",
      join(work, "runs"),
      "--quiet",
    ]);
    assert.equal(evaluated.code, 0, evaluated.stderr);
    const parent = join(work, "runs", "search_plan_act--scripted-oracle");
    const results = join(parent, readdirSync(parent)[0] as string, "results.jsonl");
    const record = JSON.parse(readFileSync(results, "utf8").trim()) as { completion: Array<{ role: string }> };
    const assistantTurns = record.completion.filter((message) => message.role === "assistant").length;
    assert.ok(assistantTurns >= 2, "the oracle needs several turns");

    const out = join(work, "sft.jsonl");
    const made = await runCli(["sft", "trajectories", join(work, "runs"), "--model-dir", qwen3TokenizerDir(), "--out", out, "--enable-thinking", "false"]);
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, new RegExp(`rows in ${assistantTurns}, out ${assistantTurns}, skipped 0`));
    const rows = readFileSync(out, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { input_ids: number[]; labels: number[]; metadata: { turn: number } });
    assert.equal(rows.length, assistantTurns);
    const report = JSON.parse(readFileSync(`${out}.report.json`, "utf8")) as { input: string; output: string; episodes: number; rows_out: number };
    assert.deepEqual([report.input, report.episodes, report.rows_out], [join(work, "runs"), 1, assistantTurns]);
    // The report names the file the user asked for, not the temporary one it was written as, and none is left over.
    assert.equal(report.output, out);
    assert.deepEqual(
      readdirSync(work).filter((name) => name.includes("partial")),
      [],
    );

    // The reference: transformers' apply_chat_template over the same history with the environment's tools.
    const env = getEnvironment("search_plan_act");
    const task = env.generate({ split: "train", seed: 0, index: 0, config: parseConfig(env.id, env.configSchema, {}) });
    writeFileSync(join(work, "tools.json"), JSON.stringify(env.start(task).tools));
    const reference = await runPython(requirePython(), [
      join(ROOT, "test/fixtures/pipeline/render_turns.py"),
      results,
      join(work, "tools.json"),
      qwen3TokenizerDir(),
    ]);
    assert.equal(reference.status, 0, reference.stderr);
    const expected = JSON.parse(reference.stdout) as Array<{ input_ids: number[]; prompt_length: number }>;
    assert.equal(expected.length, rows.length);
    rows.forEach((row, index) => {
      const want = expected[index]!;
      assert.deepEqual(row.input_ids, want.input_ids, `turn ${index}: token ids equal transformers' rendering`);
      const masked = row.labels.findIndex((label) => label !== -100);
      assert.equal(masked, want.prompt_length, `turn ${index}: labels start where the generation prompt ends`);
      assert.deepEqual(row.labels.slice(masked), want.input_ids.slice(want.prompt_length));
    });
  });

  it("refuses a folder without runs with a coded one-line error", async () => {
    const empty = mkdtempSync(join(work, "empty-"));
    const result = await runCli(["sft", "trajectories", empty, "--model-dir", qwen3TokenizerDir(), "--out", join(work, "none.jsonl")]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /no run directory .*\[SFT_NO_RUNS\]/);
  });
});
