// The `toolgym sft` pipeline end to end: worker threads give the same rows in input order as in-process
// runs; malformed lines get line-numbered report entries while the rest of the file is processed;
// Parquet output (LIST<INT32> columns) reads back equal to JSONL; --only-correct; the CLI commands.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { parquetMetadata, parquetReadObjects, parquetSchema } from "hyparquet";
import { runCli } from "./support/run-cli.ts";
import { prepareTau2Sft } from "../src/data/sft/pipeline.ts";
import { generateTau2Lines } from "../src/data/synth/generate.ts";
import { qwen3TokenizerDir } from "./support/qwen3.ts";

interface OutputRow {
  input_ids: number[];
  labels: number[];
  assistant_masks: number[];
  metadata: Record<string, unknown> & { sft: { line: number } };
}

function readRows(path: string): OutputRow[] {
  return readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as OutputRow);
}

test("malformed lines are reported by line number, the rest is processed in order by worker threads", async () => {
  const directory = qwen3TokenizerDir();
  const work = mkdtempSync(join(tmpdir(), "toolgym-sft-pipeline-"));
  const good = [...generateTau2Lines({ n: 24, seed: 5 })];
  const lines = [
    ...good.slice(0, 5),
    '{"messages": [{"role": "user", "content": "hi"}], "answer": {"role": "assistant", "content": "x"', // line 6: cut off
    ...good.slice(5, 10),
    "", // line 12: blank, ignored
    '{"messages": "not a list", "answer": {}}', // line 13
    ...good.slice(10, 20),
    '{"messages": [{"role": "system", "content": "policy"}, {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "answer": {"content": "b"}}', // line 24
    ...good.slice(20),
  ];
  const input = join(work, "tau2.jsonl");
  writeFileSync(input, `${lines.join("\n")}\n`);

  const threaded = await prepareTau2Sft({ input, output: join(work, "threads.jsonl"), modelDirectory: directory, maxTokens: 32768, workers: 2, batchSize: 3 });
  assert.equal(threaded.rows_in, 27);
  assert.equal(threaded.rows_out, 24);
  assert.deepEqual(
    threaded.issues.map((issue) => [issue.line, issue.reason]),
    [
      [6, "malformed-json"],
      [13, "invalid-record"],
      [24, "prefix-mismatch"],
    ],
  );
  assert.match(threaded.issues[0].detail, /unterminated|expected/);
  const report = JSON.parse(readFileSync(join(work, "threads.jsonl.report.json"), "utf8")) as { issues: { line: number }[] };
  assert.deepEqual(
    report.issues.map((issue) => issue.line),
    [6, 13, 24],
  );

  const threadedRows = readRows(join(work, "threads.jsonl"));
  const expectedLines = lines.flatMap((line, index) => (good.includes(line) ? [index + 1] : []));
  assert.deepEqual(
    threadedRows.map((row) => row.metadata.sft.line),
    expectedLines,
    "rows keep input order",
  );

  const inProcess = await prepareTau2Sft({ input, output: join(work, "single.jsonl"), modelDirectory: directory, maxTokens: 32768, workers: 0 });
  assert.deepEqual(readRows(join(work, "single.jsonl")), threadedRows);
  assert.equal(inProcess.label_tokens, threaded.label_tokens);
  assert.ok(threaded.label_token_share > 0 && threaded.label_token_share < 0.5);
  assert.equal(
    threaded.token_histogram.reduce((sum, bucket) => sum + bucket.rows, 0),
    24,
  );

  // Parquet: explicit LIST<INT32> schema, the same rows
  await prepareTau2Sft({ input, output: join(work, "rows.parquet"), modelDirectory: directory, maxTokens: 32768, workers: 0 });
  const buffer = readFileSync(join(work, "rows.parquet"));
  const file = buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength);
  const schema = parquetSchema(parquetMetadata(file));
  const inputIds = schema.children.find((child) => child.element.name === "input_ids");
  assert.equal(inputIds?.element.converted_type, "LIST");
  assert.equal(inputIds?.children[0].children[0].element.type, "INT32");
  const parquetRows = (await parquetReadObjects({ file })) as { input_ids: number[]; labels: number[]; assistant_masks: number[]; metadata: string }[];
  assert.equal(parquetRows.length, threadedRows.length);
  parquetRows.forEach((row, index) => {
    assert.deepEqual(Array.from(row.input_ids), threadedRows[index].input_ids);
    assert.deepEqual(Array.from(row.labels), threadedRows[index].labels);
    assert.deepEqual(Array.from(row.assistant_masks), threadedRows[index].assistant_masks);
    assert.deepEqual(JSON.parse(row.metadata), threadedRows[index].metadata);
  });
});

test("toolgym sft synth + sft tau2 --only-correct from the command line", async () => {
  const directory = qwen3TokenizerDir();
  const work = mkdtempSync(join(tmpdir(), "toolgym-sft-cli-"));
  const input = join(work, "synth.jsonl");
  const output = join(work, "out.jsonl");
  const synth = await runCli(["sft", "synth", "--n", "30", "--out", input, "--seed", "2"]);
  const tau2 = await runCli(["sft", "tau2", input, "--model-dir", directory, "--out", output, "--only-correct", "--workers", "0", "--max-tokens", "32768"]);
  assert.equal(synth.code, 0, synth.stderr);
  assert.equal(tau2.code, 0, tau2.stderr);
  const lines = readFileSync(input, "utf8").trim().split("\n");
  assert.equal(lines.length, 30);
  const correct = lines.filter((line) => (JSON.parse(line) as { metadata: { correct: number } }).metadata.correct === 1).length;
  const rows = readRows(output);
  assert.equal(rows.length, correct);
  assert.ok(rows.every((row) => row.metadata.correct === 1));
  assert.match(tau2.stdout, /rows in 30, out \d+/);
  assert.equal((await runCli(["sft", "tau2", input, "--model-dir", directory, "--out", join(work, "x.csv")])).code, 2);
});
