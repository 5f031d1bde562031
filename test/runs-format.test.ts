import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DataError } from "../src/core/index.ts";
import { TOOLGYM_VERSION } from "../src/runs/identity.ts";
import { readMetadata, readResultsForResume, readRun, scanResults } from "../src/runs/reader.ts";
import type { ResultRecord } from "../src/runs/schemas.ts";
import { ResultsWriter } from "../src/runs/writer.ts";
import { writeSyntheticRun } from "./report-support.ts";

/** A valid result record (the fields every reader relies on), as `toolgym eval` writes them. */
function record(id: string, status: "scored" | "errored" = "scored"): ResultRecord {
  return {
    example_id: Number(/\/(\d+)#/.exec(id)?.[1] ?? 0),
    sample: 0,
    id,
    task: "mock",
    prompt: [{ role: "user", content: "q" }],
    completion: [{ role: "assistant", content: "a" }],
    answer: "",
    reward: status === "scored" ? 1 : null,
    metrics: status === "scored" ? { reward: 1 } : {},
    status,
    error: status === "errored" ? { type: "ProviderError", code: "PROVIDER_FAILED", message: "HTTP 503", boundary: "provider" } : null,
    turns: 2,
    termination: status === "errored" ? "errored" : "finished",
    format_errors: 0,
    info: {},
  };
}

const line = (id: string, status: "scored" | "errored" = "scored") => JSON.stringify(record(id, status));
const ids = (path: string) => {
  const seen: string[] = [];
  const scan = scanResults(path, (result) => {
    seen.push(result.id);
  });
  return { seen, notes: scan.notes };
};

describe("run format: the one results.jsonl reader", () => {
  let directory: string;
  let path: string;
  before(() => {
    directory = mkdtempSync(join(tmpdir(), "toolgym-runs-"));
    path = join(directory, "results.jsonl");
  });
  after(() => rmSync(directory, { recursive: true, force: true }));

  it("skips a malformed middle line and a line that is not a result, noting each line number, and keeps the rest", () => {
    writeFileSync(path, `${line("m/e/0/0#0")}\n{oops\n${line("m/e/0/1#0")}\n{"id": "m/e/0/2#0"}\n\n${line("m/e/0/3#0")}\n`);
    const { seen, notes } = ids(path);
    assert.deepEqual(seen, ["m/e/0/0#0", "m/e/0/1#0", "m/e/0/3#0"]);
    assert.equal(notes.length, 2, notes.join(" | "));
    assert.match(notes[0] as string, /^skipped line 2 of results\.jsonl \(not JSON: /);
    assert.match(notes[1] as string, /^skipped line 4 of results\.jsonl \(not a result record: /);
  });

  it("drops a torn last line (noted), keeps the first of two lines with one id (noted)", () => {
    writeFileSync(path, `${line("m/e/0/0#0")}\n${line("m/e/0/1#0", "errored")}\n${line("m/e/0/0#0")}\n{"id": "m/e/0/2#0", "sta`);
    const { seen, notes } = ids(path);
    assert.deepEqual(seen, ["m/e/0/0#0", "m/e/0/1#0"]);
    assert.deepEqual(notes, ["duplicate result 'm/e/0/0#0' at line 3 ignored", "ignored a torn last line 4 of results.jsonl (the run was interrupted)"]);
  });

  it("for --resume cuts the torn last line off the file, so appended lines start clean", () => {
    const whole = `${line("m/e/0/0#0")}\n{oops\n${line("m/e/0/1#0", "errored")}\n`;
    writeFileSync(path, `${whole}{"id": "m/e/0/2#0", "sta`);
    const resumed = readResultsForResume(path, (result) => result.id);
    assert.deepEqual(resumed.results, ["m/e/0/0#0", "m/e/0/1#0"]);
    assert.equal(resumed.notes.length, 2);
    assert.match(resumed.notes[0] as string, /^skipped line 2 of results\.jsonl \(not JSON: /);
    assert.equal(resumed.notes[1], "ignored a torn last line 4 of results.jsonl (the run was interrupted)");
    assert.equal(readFileSync(path, "utf8"), whole);
    const writer = new ResultsWriter(path);
    writer.append(record("m/e/0/2#0"));
    writer.close();
    assert.deepEqual(ids(path).seen, ["m/e/0/0#0", "m/e/0/1#0", "m/e/0/2#0"]);
  });

  it("for --resume keeps a whole last record that lacks its newline, and adds the newline", () => {
    writeFileSync(path, `${line("m/e/0/0#0")}\n${line("m/e/0/1#0")}`);
    assert.deepEqual(readResultsForResume(path, (result) => result.id).results, ["m/e/0/0#0", "m/e/0/1#0"]);
    assert.equal(readFileSync(path, "utf8"), `${line("m/e/0/0#0")}\n${line("m/e/0/1#0")}\n`);
  });

  it("reads a file bigger than its read chunk line by line", () => {
    const padding = "x".repeat(300_000);
    const records = Array.from({ length: 12 }, (_, index) => ({ ...record(`m/e/0/${index}#0`), answer: padding }));
    writeFileSync(path, records.map((item) => `${JSON.stringify(item)}\n`).join(""));
    const seen: string[] = [];
    scanResults(path, (result) => {
      assert.equal(result.answer.length, padding.length);
      seen.push(result.id);
    });
    assert.deepEqual(
      seen,
      records.map((item) => item.id),
    );
  });
});

describe("run format: the one writer", () => {
  let directory: string;
  before(() => {
    directory = mkdtempSync(join(tmpdir(), "toolgym-runs-"));
  });
  after(() => rmSync(directory, { recursive: true, force: true }));

  it("batches the lines queued in one tick and resolves only once they are in the file; refuses writes after close", async () => {
    const path = join(directory, "batched.jsonl");
    const writer = new ResultsWriter(path);
    const written = [writer.write(record("m/e/0/0#0")), writer.write(record("m/e/0/1#0"))];
    assert.equal(readFileSync(path, "utf8"), "", "nothing is written before the tick ends");
    await Promise.all(written);
    assert.equal(readFileSync(path, "utf8"), `${line("m/e/0/0#0")}\n${line("m/e/0/1#0")}\n`);
    const last = writer.write(record("m/e/0/2#0"));
    writer.close();
    await last;
    assert.equal(readFileSync(path, "utf8"), `${line("m/e/0/0#0")}\n${line("m/e/0/1#0")}\n${line("m/e/0/2#0")}\n`, "close flushes queued lines");
    assert.throws(
      () => writer.write(record("m/e/0/3#0")),
      (error: unknown) => DataError.isInstance(error) && error.code === "RESULTS_CLOSED",
    );
  });

  it("writes runs that the reader reads back: metadata with the package.json version, results, summary", () => {
    const run = writeSyntheticRun({
      root: directory,
      benchmark: "qa",
      label: "base",
      metrics: ["em"],
      episodes: [{ metrics: { em: 1 } }, { metrics: { em: 0 } }, { metrics: {}, errored: true }],
    });
    const packageVersion = (JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8")) as { version: string }).version;
    assert.equal(TOOLGYM_VERSION, packageVersion);
    const loaded = readRun(run);
    assert.equal(loaded.metadata.toolgymVersion, packageVersion);
    assert.equal(loaded.metadata.status, "complete");
    assert.deepEqual(loaded.metadata.counts, { scored: 2, errored: 1 });
    assert.deepEqual(
      loaded.results.map((result) => [result.id, result.status]),
      [
        ["qa/eval/0/0#0", "scored"],
        ["qa/eval/0/1#0", "scored"],
        ["qa/eval/0/2#0", "errored"],
      ],
    );
    assert.deepEqual(loaded.notes, []);
    const summary = JSON.parse(readFileSync(join(run, "summary.json"), "utf8")) as Record<string, unknown>;
    assert.equal(summary.scored, 2);
    assert.equal(summary.errored, 1);
    assert.equal(summary.status, "complete");
  });

  it("refuses a metadata.json that is not a run's, naming the field", () => {
    const run = writeSyntheticRun({ root: join(directory, "edited"), benchmark: "qa", label: "base", metrics: ["em"], episodes: [{ metrics: { em: 1 } }] });
    const metadataPath = join(run, "metadata.json");
    const metadata = JSON.parse(readFileSync(metadataPath, "utf8")) as Record<string, unknown>;
    delete metadata.benchmark;
    writeFileSync(metadataPath, JSON.stringify(metadata));
    assert.throws(
      () => readMetadata(run),
      (error: unknown) => DataError.isInstance(error) && error.code === "RUN_INVALID" && /benchmark/.test(error.message),
    );
  });
});
