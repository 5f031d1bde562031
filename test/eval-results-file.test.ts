import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DataError } from "../src/core/index.ts";
import { ResultsWriter, readResultsForResume } from "../src/eval/results-file.ts";

function line(id: string, status = "scored"): string {
  return JSON.stringify({
    id,
    status,
    reward: status === "scored" ? 1 : null,
    metrics: { reward: 1 },
    turns: 2,
    termination: "finished",
    format_errors: 0,
    error: null,
  });
}

describe("results.jsonl for --resume", () => {
  it("cuts a torn last line off the file, keeps whole lines, and ignores a duplicated id", () => {
    const directory = mkdtempSync(join(tmpdir(), "toolgym-results-"));
    try {
      const path = join(directory, "results.jsonl");
      writeFileSync(path, `${line("a#0")}\n${line("b#0", "errored")}\n${line("a#0")}\n{"id": "c#0", "sta`);
      const digests = readResultsForResume(path);
      assert.deepEqual(
        digests.map((digest) => [digest.id, digest.status]),
        [
          ["a#0", "scored"],
          ["b#0", "errored"],
        ],
      );
      assert.equal(readFileSync(path, "utf8"), `${line("a#0")}\n${line("b#0", "errored")}\n${line("a#0")}\n`);
      const writer = new ResultsWriter(path);
      writer.append(JSON.parse(line("c#0")));
      writer.close();
      assert.deepEqual(
        readResultsForResume(path).map((digest) => digest.id),
        ["a#0", "b#0", "c#0"],
      );
      // A complete but unparseable last line is torn too (killed between the bytes and the newline is impossible, but be safe).
      writeFileSync(path, `${line("a#0")}\nnot json\n`);
      assert.deepEqual(
        readResultsForResume(path).map((digest) => digest.id),
        ["a#0"],
      );
      assert.equal(readFileSync(path, "utf8"), `${line("a#0")}\n`);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("refuses a corrupt line in the middle with the file and line number", () => {
    const directory = mkdtempSync(join(tmpdir(), "toolgym-results-"));
    try {
      const path = join(directory, "results.jsonl");
      writeFileSync(path, `${line("a#0")}\n{oops\n${line("b#0")}\n`);
      assert.throws(
        () => readResultsForResume(path),
        (error: unknown) => DataError.isInstance(error) && /results\.jsonl:2: /.test((error as Error).message),
      );
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
