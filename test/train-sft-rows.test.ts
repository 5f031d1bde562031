import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { requirePython } from "./support/qwen3.ts";

/**
 * python/train_sft.py reads `toolgym sft` rows whatever their metadata holds. The check writes 24,000 rows
 * (~22 MB) whose metadata reward is the integer 1 until the last 40 rows and 0.92 after: beyond the block
 * from which `datasets`' JSON loader infers a schema, which made SFT on a real pipeline's rows fail.
 */
describe("train_sft.py row loading", () => {
  it("loads rows whose metadata changes number type past the first block, deriving labels from the masks", () => {
    const scratch = mkdtempSync(join(tmpdir(), "toolgym-sft-rows-"));
    try {
      const output = execFileSync(requirePython(), [resolve(import.meta.dirname, "../python/tests/check_sft_rows.py"), scratch], {
        encoding: "utf8",
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
        timeout: 300_000,
        maxBuffer: 16 * 1024 * 1024,
      });
      const report = JSON.parse(output.trim().split("\n").at(-1) as string);
      assert.ok(report.size > 20_000_000, `the rows file is ${report.size} bytes, past the loader's 10 MB inference block`);
      assert.equal(report.rows, 24_000);
      assert.deepEqual(report.columns, ["input_ids", "labels"]);
      // Row 23,999: ids (23,999 × 7 + position) mod 2000; the mask opens at position 90.
      assert.deepEqual(report.last_input_ids, [1993, 1994, 1995]);
      assert.deepEqual(report.last_labels, [-100, -100, 83, 84]);
      assert.deepEqual(report.labelled, [-100, 6, 7], "given labels are kept");
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
