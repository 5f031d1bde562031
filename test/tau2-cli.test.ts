import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { qwen3TokenizerDir } from "./support/qwen3.ts";
import { runCli } from "./support/run-cli.ts";

/** The tau2 environments through the command line: replay of reference cases, eval, export, sft. */
const cases = readFileSync(new URL("./fixtures/tau2/replay_cases.jsonl", import.meta.url), "utf8")
  .trim()
  .split("\n");
const work = mkdtempSync(join(tmpdir(), "toolgym-tau2-cli-"));

describe("toolgym replay for tau2", () => {
  it("replay tau2 --cases prints one line per case with tau2's outputs", async () => {
    // A few cases of each domain keep the run short; the full file is checked in tau2-replay.test.ts.
    const picked = ["retail", "mock", "telecom"].flatMap((domain) => cases.filter((line) => JSON.parse(line).domain === domain).slice(0, 4));
    const file = join(work, "cases.jsonl");
    writeFileSync(file, `${picked.join("\n")}\n`);
    const result = await runCli(["replay", "tau2", "--cases", file, "--json"]);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.equal(lines.length, picked.length);
    lines.forEach((line, position) => {
      const item = JSON.parse(picked[position] as string);
      assert.equal(line.case_id, item.case_id);
      assert.deepEqual(line.tool_results, item.expected.tool_results);
      assert.equal(line.db_hash, item.expected.db_hash);
      assert.equal(line.user_db_hash, item.expected.user_db_hash);
      assert.equal(line.reward, item.expected.reward);
      assert.deepEqual(line.reward_info, item.expected.reward_info);
      assert.equal(line.partial, item.expected.nl_assertion_skipped);
    });
  });

  it("replay tau2_retail --task ID --calls FILE prints the case's outputs", async () => {
    const item = cases.map((line) => JSON.parse(line)).find((candidate) => candidate.domain === "retail" && candidate.kind === "gold");
    assert.ok(item);
    const file = join(work, "calls.json");
    writeFileSync(file, JSON.stringify({ tool_calls: item.tool_calls, assistant_texts: item.assistant_texts }));
    const result = await runCli(["replay", "tau2_retail", "--task", item.task_id, "--calls", file, "--json"]);
    assert.equal(result.code, 0, result.stderr);
    const output = JSON.parse(result.stdout);
    assert.deepEqual(Object.keys(output), ["tool_results", "db_hash", "user_db_hash", "reward", "reward_info", "partial"]);
    assert.deepEqual(output.tool_results, item.expected.tool_results);
    assert.equal(output.db_hash, item.expected.db_hash);
    assert.deepEqual(output.reward_info, item.expected.reward_info);
    assert.equal(output.partial, item.expected.nl_assertion_skipped);
  });

  it("an unknown task id is a one-line usage error", async () => {
    const file = join(work, "calls-empty.json");
    writeFileSync(file, JSON.stringify({ tool_calls: [], assistant_texts: [] }));
    const result = await runCli(["replay", "tau2_retail", "--task", "no-such-task", "--calls", file, "--json"]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /no task 'no-such-task'/);
  });
});

describe("tau2 user and judge servers", () => {
  it("a dead --user-model or --judge-model server is one line before the first episode, naming the option", async () => {
    for (const option of ["--user-model", "--judge-model"]) {
      const result = await runCli(["eval", "--env", "tau2_mock", "--n", "1", option, "http://127.0.0.1:9/v1#m", "--out", join(work, "dead"), "--quiet"]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, new RegExp(`GET http://127.0.0.1:9/v1/models could not connect .*check ${option}`));
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    }
  });
});

describe("tau2 reports", () => {
  it("show reward, pass and the share of partial episodes (NL_ASSERTION unscored without a judge)", async () => {
    const out = join(work, "report-runs");
    const evaluated = await runCli(["eval", "--env", "tau2_retail", "--split", "test", "--n", "12", "--quiet", "--out", out]);
    assert.equal(evaluated.code, 0, evaluated.stderr);
    const report = await runCli(["report", out, "--format", "json"]);
    assert.equal(report.code, 0, report.stderr);
    const rows = JSON.parse(report.stdout).rows as { metric: string; cells: { mean: number }[] }[];
    const mean = (metric: string) => rows.find((row) => row.metric === metric)?.cells[0]?.mean;
    // Tasks 9-11 of the test split carry NL assertions: the oracle's reward is 1 everywhere, but those
    // three episodes are partial and not passes.
    assert.equal(mean("reward"), 1);
    assert.equal(mean("partial"), 0.25);
    assert.equal(mean("pass"), 0.75);
  });
});

describe("tau2 runs back into SFT", () => {
  it("eval → export --format tau2-sft → sft tau2 reads every exported row", async () => {
    const out = join(work, "runs");
    const evaluated = await runCli(["eval", "--env", "tau2_mock", "--n", "10", "--quiet", "--out", out]);
    assert.equal(evaluated.code, 0, evaluated.stderr);
    const runRoot = join(out, readdirSync(out)[0] as string);
    const runDirectory = join(runRoot, readdirSync(runRoot)[0] as string);
    const exported = join(work, "tau2-sft.jsonl");
    const exportResult = await runCli(["export", runDirectory, "--format", "tau2-sft", "--out", exported]);
    assert.equal(exportResult.code, 0, exportResult.stderr);
    const rows = readFileSync(exported, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.ok(rows.length >= 10);
    for (const row of rows) {
      assert.deepEqual(Object.keys(row), ["messages", "answer", "tools", "metadata"]);
      assert.deepEqual(Object.keys(row.answer), ["role", "content", "thinking", "tool_calls"]);
      assert.deepEqual(Object.keys(row.metadata), ["source_dialog_id", "turn_index", "reward", "correct"]);
    }
    const tokenized = join(work, "sft.jsonl");
    const sft = await runCli(["sft", "tau2", exported, "--model-dir", qwen3TokenizerDir(), "--out", tokenized, "--workers", "0"]);
    assert.equal(sft.code, 0, sft.stderr);
    const written = readFileSync(tokenized, "utf8").trim().split("\n");
    assert.equal(written.length, rows.length, "every exported row becomes a training row");
    const first = JSON.parse(written[0] as string);
    assert.ok(Array.isArray(first.input_ids) && first.input_ids.length > 0);
  });
});
