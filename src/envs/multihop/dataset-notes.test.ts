// Records skipped while loading a dev file are a note the run reports (never a line the library prints), and a
// malformed id_aliases.json line names the fix that applies to the caller (skip_bad does not apply to it).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { DataError } from "../../core/index.ts";
import { runCli } from "../../../test/support/run-cli.ts";
import { clearDatasetCache, loadDataset, loadWikiAliases } from "./dataset.ts";
import { MULTIHOP_FIXTURES } from "./fixtures.ts";

const root = resolve(import.meta.dirname, "../../..");
const directory = mkdtempSync(join(tmpdir(), "toolgym-dataset-notes-"));
const sampleLines = readFileSync(join(MULTIHOP_FIXTURES, "musique_dev_sample.jsonl"), "utf8").split("\n").filter(Boolean);
// Lines 2 and 5 are malformed: one is not JSON, one lacks its question.
const badDev = join(directory, "musique_bad.jsonl");
writeFileSync(badDev, [sampleLines[0], "{not json", sampleLines[1], sampleLines[2], JSON.stringify({ id: "x" }), sampleLines[3]].join("\n") + "\n");
const badAliases = join(directory, "id_aliases.json");
writeFileSync(badAliases, `${JSON.stringify({ Q_id: "Q1", aliases: ["One"], demonyms: [] })}\n{"Q_id": "Q2", "aliases": "Two"}\n`);

function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [join(root, "bin/toolgym.js"), ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.on("exit", (code) => done({ code, stderr })));
}

describe("multihop data notes and hints", () => {
  it("a skip-bad load returns the skipped records as a note", () => {
    clearDatasetCache();
    const dataset = loadDataset({ dataset: "musique", file: badDev, skipBad: true });
    assert.equal(dataset.examples.length, 4);
    assert.equal(dataset.notes.length, 1);
    assert.match(
      dataset.notes[0] as string,
      new RegExp(`^skipped 2 malformed record\\(s\\) in ${badDev.replace(/[.]/g, "\\.")} \\(skip_bad\\); first at line 2: `),
    );
    assert.deepEqual(loadDataset({ dataset: "musique", file: join(MULTIHOP_FIXTURES, "musique_dev_sample.jsonl"), skipBad: false }).notes, []);
  });

  it("eval prints the note once, as the run's note (also with worker threads), and summary.json keeps it", { timeout: 180_000 }, async () => {
    const out = join(directory, "runs");
    const config = JSON.stringify({ file: badDev, skip_bad: true, mode: "context" });
    const result = await run(["eval", "--env", "musique", "--config", config, "--n", "4", "--workers", "2", "--quiet", "--out", out]);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stderr.split("\n").filter((line) => line.includes("malformed record"));
    assert.equal(lines.length, 1, result.stderr);
    assert.match(
      lines[0] as string,
      /^toolgym: note: musique \/ scripted-oracle: skipped 2 malformed record\(s\) in .*musique_bad\.jsonl \(skip_bad\); first at line 2: /,
    );
    const [runDirectory] = readdirSync(join(out, "musique--scripted-oracle"));
    const summary = JSON.parse(readFileSync(join(out, "musique--scripted-oracle", runDirectory as string, "summary.json"), "utf8")) as { notes: string[] };
    assert.equal(summary.notes.filter((note) => note.startsWith("skipped 2 malformed record(s)")).length, 1);
  });

  it("a malformed aliases line names aliases_file (config) or --aliases (score), never skip_bad", async () => {
    assert.throws(
      () => loadWikiAliases(badAliases),
      (error: unknown) =>
        error instanceof DataError &&
        /malformed record #2/.test(error.message) &&
        /point aliases_file at the official id_aliases\.json/.test(error.message) &&
        !error.message.includes("skip_bad"),
    );
    const gold = join(MULTIHOP_FIXTURES, "2wiki_dev_sample.json");
    const prediction = join(directory, "pred.json");
    writeFileSync(prediction, JSON.stringify({ answer: {}, sp: {}, evidence: {} }));
    const cli = await runCli(["score", "2wiki", "--gold", gold, "--pred", prediction, "--aliases", badAliases]);
    assert.equal(cli.code, 1, cli.stderr);
    assert.match(cli.stderr, /malformed record #2.*pass the official id_aliases\.json as --aliases/);
    assert.doesNotMatch(cli.stderr, /skip_bad/);
  });
});
