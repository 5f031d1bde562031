// Labels against a straightforward Python implementation of the double-render recipe
// (python/crosscheck/sft_reference.py, transformers apply_chat_template + the Rust tokenizer), in one
// Python process: identical input_ids and labels on every untruncated row, the same rows emitted, and,
// with enable_thinking=false (spec P1), the same rows rejected by the prefix check, each reported by
// toolgym with its line number.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { prepareTau2Sft } from "../src/data/sft/pipeline.ts";
import { generateTau2Lines } from "../src/data/synth/generate.ts";
import { runPython } from "./sft-python.ts";
import { qwen3TokenizerDir, requirePython } from "./support/qwen3.ts";

interface ReferenceLine {
  line: number;
  input_ids?: number[];
  labels?: number[];
  skip?: string;
}

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as T);
}

test("input_ids and labels equal the Python double-render reference; P1 prefix failures are reported by line", async () => {
  const directory = qwen3TokenizerDir();
  const work = mkdtempSync(join(tmpdir(), "toolgym-sft-labels-"));
  const input = join(work, "tau2.jsonl");
  writeFileSync(input, `${[...generateTau2Lines({ n: 130, seed: 3 })].join("\n")}\n`);
  const inputNoThinking = join(work, "tau2-no-thinking.jsonl");
  writeFileSync(inputNoThinking, `${[...generateTau2Lines({ n: 40, seed: 4 })].join("\n")}\n`);

  const jobs = [
    { model_dir: directory, input, output: join(work, "python.jsonl"), max_tokens: 32768 },
    { model_dir: directory, input: inputNoThinking, output: join(work, "python-no-thinking.jsonl"), max_tokens: 32768, enable_thinking: false },
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
  const run = await pythonRun;
  assert.equal(run.status, 0, run.stderr);

  const rows = readJsonl<{ input_ids: number[]; labels: number[]; assistant_masks: number[]; metadata: { sft: { line: number } } }>(
    join(work, "toolgym.jsonl"),
  );
  const reference = readJsonl<ReferenceLine>(jobs[0].output);
  const byLine = new Map(rows.map((row) => [row.metadata.sft.line, row]));
  let compared = 0;
  for (const expected of reference) {
    if (expected.skip === "needs-truncation") continue;
    const row = byLine.get(expected.line);
    assert.equal(expected.skip, undefined, `Python skipped line ${expected.line}: ${expected.skip}`);
    assert.ok(row, `toolgym emitted no row for line ${expected.line}`);
    assert.deepEqual(row.input_ids, expected.input_ids, `input_ids differ on line ${expected.line}`);
    assert.deepEqual(row.labels, expected.labels, `labels differ on line ${expected.line}`);
    assert.deepEqual(
      row.assistant_masks,
      row.labels.map((label) => (label === -100 ? 0 : 1)),
    );
    compared++;
  }
  assert.ok(compared >= 120, `only ${compared} rows compared`);
  assert.equal(report.rows_out, rows.length);
  assert.ok(report.segment_cache.hits > report.segment_cache.misses, "rows sharing histories should hit the segment cache");

  // enable_thinking=false with target reasoning breaks the prefix property (spec P1): never emitted silently
  const referenceNoThinking = readJsonl<ReferenceLine>(jobs[1].output);
  const pythonFailures = referenceNoThinking.filter((line) => line.skip === "prefix-mismatch").map((line) => line.line);
  const toolgymFailures = noThinking.issues.filter((issue) => issue.reason === "prefix-mismatch").map((issue) => issue.line);
  assert.ok(pythonFailures.length > 0);
  assert.deepEqual(toolgymFailures, pythonFailures);
  assert.equal(noThinking.skipped["prefix-mismatch"], pythonFailures.length);
  assert.match(noThinking.issues[0].detail, /not a prefix.*spec P1/);
  const noThinkingRows = readJsonl<{ input_ids: number[]; labels: number[]; metadata: { sft: { line: number } } }>(join(work, "toolgym-no-thinking.jsonl"));
  const passing = referenceNoThinking.filter((line) => line.input_ids);
  assert.deepEqual(
    noThinkingRows.map((row) => row.metadata.sft.line),
    passing.map((line) => line.line),
  );
  noThinkingRows.forEach((row, index) => assert.deepEqual(row.labels, passing[index].labels));
});
