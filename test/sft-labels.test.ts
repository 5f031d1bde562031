// Labels against the Python reference of the seed's recipe (python/crosscheck/sft_reference.py: rename
// `thinking`, "" for missing tool-call content, transformers apply_chat_template twice, the prefix check),
// live, in one Python process: on the committed fixture rows (whose Python outputs must still be the
// committed ones) and on `toolgym sft synth` output with whitespace-edged reasoning and content, toolgym
// writes identical input_ids and labels on every untruncated row and drops exactly the rows Python drops
// (with enable_thinking=false, spec P1), each reported with its line number.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { prepareTau2Sft } from "../src/data/sft/pipeline.ts";
import { runPython } from "./sft-python.ts";
import { qwen3TokenizerDir, requirePython } from "./support/qwen3.ts";
import { readJsonl, type OutputRow } from "./support/sft-rows.ts";

interface ReferenceLine {
  line: number;
  input_ids?: number[];
  labels?: number[];
  skip?: string;
}

/** Every untruncated row: Python's row ⇔ toolgym's identical row; a Python drop ⇔ a toolgym drop. Returns rows compared. */
function assertIdentical(rows: OutputRow[], reference: ReferenceLine[], label: string): number {
  const byLine = new Map(rows.map((row) => [row.metadata.sft.line, row]));
  let compared = 0;
  for (const expected of reference) {
    if (expected.skip === "needs-truncation") continue;
    const row = byLine.get(expected.line);
    if (expected.skip !== undefined) {
      assert.equal(row, undefined, `${label}: Python dropped line ${expected.line} (${expected.skip}) but toolgym wrote it`);
      continue;
    }
    assert.ok(row, `${label}: toolgym wrote no row for line ${expected.line}`);
    assert.deepEqual(row.input_ids, expected.input_ids, `${label}: input_ids differ on line ${expected.line}`);
    assert.deepEqual(row.labels, expected.labels, `${label}: labels differ on line ${expected.line}`);
    assert.deepEqual(
      row.assistant_masks,
      row.labels.map((value) => (value === -100 ? 0 : 1)),
    );
    compared++;
  }
  return compared;
}

/** `toolgym sft synth`, run as the CLI. */
function synth(path: string, n: number, seed: number): void {
  const bin = resolve(import.meta.dirname, "../bin/toolgym.js");
  execFileSync(process.execPath, [bin, "sft", "synth", "--n", String(n), "--out", path, "--seed", String(seed)], { stdio: "ignore" });
}

test("input_ids and labels equal the Python reference of the seed's recipe; prefix failures are reported by line", async () => {
  const directory = qwen3TokenizerDir();
  const work = mkdtempSync(join(tmpdir(), "toolgym-sft-labels-"));
  const fixtures = resolve(import.meta.dirname, "fixtures/sft");
  const input = join(work, "tau2.jsonl");
  const inputNoThinking = join(work, "tau2-no-thinking.jsonl");
  synth(input, 130, 3);
  synth(inputNoThinking, 40, 4);

  const fixtureRows = join(fixtures, "tau2-rows.jsonl");
  const jobs = [
    { model_dir: directory, input, output: join(work, "python.jsonl"), max_tokens: 32768 },
    { model_dir: directory, input: inputNoThinking, output: join(work, "python-no-thinking.jsonl"), max_tokens: 32768, enable_thinking: false },
    { model_dir: directory, input: fixtureRows, output: join(work, "fixture-default.jsonl"), max_tokens: 32768, with_text: true },
    { model_dir: directory, input: fixtureRows, output: join(work, "fixture-no-thinking.jsonl"), max_tokens: 32768, enable_thinking: false, with_text: true },
  ];
  writeFileSync(join(work, "jobs.json"), JSON.stringify(jobs));
  const script = resolve(import.meta.dirname, "../python/crosscheck/sft_reference.py");
  // Python runs while toolgym prepares the same files
  const pythonRun = runPython(requirePython(), [script, "--jobs", join(work, "jobs.json")]);
  const report = await prepareTau2Sft({ input, output: join(work, "toolgym.jsonl"), modelDirectory: directory, maxTokens: 32768 });
  const noThinking = await prepareTau2Sft({
    input: inputNoThinking,
    output: join(work, "toolgym-no-thinking.jsonl"),
    modelDirectory: directory,
    maxTokens: 32768,
    enableThinking: false,
  });
  const fixtureDefault = await prepareTau2Sft({ input: fixtureRows, output: join(work, "toolgym-fixture.jsonl"), modelDirectory: directory, maxTokens: 32768 });
  const fixtureNoThinking = await prepareTau2Sft({
    input: fixtureRows,
    output: join(work, "toolgym-fixture-no-thinking.jsonl"),
    modelDirectory: directory,
    maxTokens: 32768,
    enableThinking: false,
  });
  const run = await pythonRun;
  assert.equal(run.status, 0, run.stderr);

  // the committed Python outputs are still what Python writes
  assert.equal(readFileSync(jobs[2].output, "utf8"), readFileSync(join(fixtures, "expected-default.jsonl"), "utf8"));
  assert.equal(readFileSync(jobs[3].output, "utf8"), readFileSync(join(fixtures, "expected-no-thinking.jsonl"), "utf8"));
  assert.ok(assertIdentical(readJsonl(join(work, "toolgym-fixture.jsonl")), readJsonl(jobs[2].output), "fixtures") >= 25);
  assert.ok(assertIdentical(readJsonl(join(work, "toolgym-fixture-no-thinking.jsonl")), readJsonl(jobs[3].output), "fixtures, no thinking") >= 5);
  assert.equal(fixtureDefault.rows_out + fixtureNoThinking.rows_out, 30);

  // synth output: identical on every untruncated row, whitespace-edged targets included
  const rows = readJsonl<OutputRow>(join(work, "toolgym.jsonl"));
  assert.ok(assertIdentical(rows, readJsonl(jobs[0].output), "synth") >= 120);
  assert.equal(report.rows_out, rows.length);
  assert.ok(report.segment_cache.hits > report.segment_cache.misses, "rows sharing histories should hit the segment cache");
  const answers = readFileSync(input, "utf8")
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as { answer: { thinking?: string; content?: string | null } }).answer);
  const edgedReasoning = answers.filter((answer) => /^[ \t]|[ \t]$/.test(answer.thinking ?? "")).length;
  const edgedContent = answers.filter((answer) => /^\s|\s$/.test(answer.content ?? "")).length;
  assert.ok(edgedReasoning >= 15, `only ${edgedReasoning} targets with space/tab-edged reasoning`);
  assert.ok(edgedContent >= 3, `only ${edgedContent} targets with whitespace-edged content`);

  // enable_thinking=false with target reasoning breaks the prefix property (spec P1): never emitted silently
  const referenceNoThinking = readJsonl<ReferenceLine>(jobs[1].output);
  const pythonFailures = referenceNoThinking.filter((line) => line.skip === "prefix-mismatch").map((line) => line.line);
  const toolgymFailures = noThinking.issues.filter((issue) => issue.reason === "prefix-mismatch").map((issue) => issue.line);
  assert.ok(pythonFailures.length > 0);
  assert.deepEqual(toolgymFailures, pythonFailures);
  assert.equal(noThinking.skipped["prefix-mismatch"], pythonFailures.length);
  assert.match(noThinking.issues[0].detail, /not a prefix.*spec P1/);
  // every synth row the prefix check lets through is identical too (the fixture rows above guarantee some exist)
  assertIdentical(readJsonl(join(work, "toolgym-no-thinking.jsonl")), referenceNoThinking, "synth, no thinking");
});
