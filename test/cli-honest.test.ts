// Issue 37: a careless user loses nothing. Each case once exited 0 or 1 where the docs promise 2, or rewrote
// what it should have refused; the CLI runs in-process (test/support/run-cli.ts).
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { runCli } from "./support/run-cli.ts";

const work = mkdtempSync(join(tmpdir(), "toolgym-honest-cli-"));
const at = (name: string) => join(work, name);
after(() => rmSync(work, { recursive: true, force: true }));

/** One coded line on stderr with the exit code. */
function assertRefused(result: { code: number; stderr: string }, exit: number, code: string, says?: RegExp): void {
  assert.equal(result.code, exit, result.stderr);
  const lines = result.stderr.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0] as string, new RegExp(`^toolgym: \\S.* \\[${code}\\]$`));
  if (says) assert.match(lines[0] as string, says);
}

describe("--out naming an existing file", () => {
  it("eval, eval --suite and pipeline (with --dry-run too) exit 2 before anything runs", async () => {
    const file = at("a-file");
    writeFileSync(file, "keep me\n");
    assertRefused(await runCli(["eval", "--env", "mock", "--n", "2", "--out", file]), 2, "OUT_NOT_DIRECTORY", /--out '.*a-file' is a file/);
    assertRefused(await runCli(["eval", "--suite", "quick", "--out", file]), 2, "OUT_NOT_DIRECTORY");
    assertRefused(await runCli(["pipeline", "--preset", "tiny", "--out", file, "--dry-run"]), 2, "OUT_NOT_DIRECTORY");
    assertRefused(await runCli(["pipeline", "--preset", "tiny", "--out", file]), 2, "OUT_NOT_DIRECTORY");
    assert.equal(readFileSync(file, "utf8"), "keep me\n");
  });
});

describe("suite files are the user's input: their mistakes exit 2", () => {
  it("a misspelt env, bad YAML, a schema error and a directory as --suite exit 2; planned: true keeps a placeholder row", async () => {
    const typo = at("typo.yaml");
    writeFileSync(typo, "name: typo\nrows:\n  - benchmark: lookup\n    env: mokc\n    n: 2\n");
    const out = at("typo-out");
    assertRefused(await runCli(["eval", "--suite", typo, "--out", out]), 2, "ENV_UNKNOWN", /row lookup: unknown environment 'mokc'; available: .*mock/);
    assert.equal(existsSync(out), false, "nothing written");
    const yaml = at("bad.yaml");
    writeFileSync(yaml, "name: bad\nrows: [\n");
    assertRefused(await runCli(["eval", "--suite", yaml, "--out", out]), 2, "SUITE_UNREADABLE", /not valid YAML/);
    const schema = at("schema.json");
    writeFileSync(schema, JSON.stringify({ name: "s", rows: [{ benchmark: "x", env: "mock", n: 0 }] }));
    assertRefused(await runCli(["eval", "--suite", schema, "--out", out]), 2, "SUITE_INVALID", /field 'rows\.0\.n'/);
    const directory = at("suite.yaml");
    mkdirSync(directory);
    assertRefused(await runCli(["eval", "--suite", directory, "--out", out]), 2, "FILE_NOT_FOUND", /is a directory/);
  });

  it("a second suite into one --out is refused instead of overwriting suite.json", async () => {
    const out = at("one-out");
    const suite = at("small.yaml");
    writeFileSync(suite, "name: small\nrows:\n  - benchmark: lookup\n    env: mock\n    n: 2\n");
    assert.equal((await runCli(["eval", "--suite", suite, "--out", out, "--quiet"])).code, 0);
    const before = readFileSync(join(out, "suite.json"), "utf8");
    assertRefused(await runCli(["eval", "--suite", "quick", "--out", out, "--quiet"]), 2, "OUT_EXISTS", /already holds a suite run/);
    assert.equal(readFileSync(join(out, "suite.json"), "utf8"), before);
  });
});

describe("audit --policies without the oracle", () => {
  it("runs the oracle as the reference and judges only what ran: a hacking pilot alone passes, exit 0", async () => {
    const result = await runCli(["audit", "search_plan_act", "--policies", "search_spam", "--n", "4"]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /note: oracle runs too: it is the reference/);
    assert.match(result.stdout, /^oracle +1\.000/m);
    assert.match(result.stdout, /^search_spam +0\.000/m);
    assert.match(result.stdout, /verdict: PASS/);
  });
});

describe("pipeline --only", () => {
  it("a stage whose input stage has not run is refused naming the stage to run first, before Python or any stage", async () => {
    const out = at("only-sft");
    assertRefused(
      await runCli(["pipeline", "--preset", "tiny", "--out", out, "--only", "sft"]),
      2,
      "STAGE_NOT_READY",
      /--only sft: it reads the data stage's output.*run --only data,sft/,
    );
    assert.equal(existsSync(out), false);
  });

  it("rerunning a stage of an existing run needs --resume (--only card no longer rewrites it silently)", async () => {
    const out = at("existing");
    mkdirSync(join(out, "eval-pre"), { recursive: true });
    writeFileSync(join(out, "eval-pre", "done.json"), '{"seconds": 1}\n');
    writeFileSync(join(out, "pipeline.json"), "{}\n");
    assertRefused(
      await runCli(["pipeline", "--preset", "tiny", "--out", out, "--only", "card"]),
      2,
      "PIPELINE_EXISTS",
      /pass --resume to continue it \(with --only to rerun those stages\)/,
    );
  });
});

describe("Ctrl-C while a file is built", () => {
  it("dataset: progress on stderr, then exit 130 with one line, and no hidden partial file left", async () => {
    const folder = at("interrupted");
    mkdirSync(folder);
    const controller = new AbortController();
    const stopping = setTimeout(() => controller.abort(new Error("received SIGINT")), 1500);
    try {
      const result = await runCli(["dataset", "mock", "--n", "2000000", "--out", join(folder, "prompts.jsonl")], { interrupts: () => controller.signal });
      assert.equal(result.code, 130, result.stderr);
      assert.match(result.stderr, /^dataset mock .* \d+\/2000000 /m, "a progress line");
      assert.match(result.stderr, /^toolgym: interrupted; nothing was written to .*prompts\.jsonl \(its partial file was removed\) \[INTERRUPTED\]$/m);
      assert.deepEqual(readdirSync(folder), [], "no .prompts.PID.partial.jsonl");
    } finally {
      clearTimeout(stopping);
    }
  });
});

describe("eval --json", () => {
  it("prints the runs' summaries as JSON on stdout, the same as each summary.json", async () => {
    const out = at("json");
    const result = await runCli(["eval", "--env", "mock", "--n", "3", "--json", "--quiet", "--out", out]);
    assert.equal(result.code, 0, result.stderr);
    const summaries = JSON.parse(result.stdout) as Array<{ dir: string; scored: number; mean: number }>;
    assert.equal(summaries.length, 1);
    assert.deepEqual(summaries[0], JSON.parse(readFileSync(join(summaries[0]!.dir, "summary.json"), "utf8")));
    assert.equal(summaries[0]!.scored, 3);
  });
});
