// Issue 37: `--resume` plays errored episodes again (after an outage), one process writes a run at a time, and
// a --run-id that names no run is a usage error. The CLI runs in-process (test/support/run-cli.ts) against a
// scripted server whose answers the test writes (src/testing/answering-server.ts).
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { LOCK_FILE } from "../src/runs/lock.ts";
import { startAnsweringServer, toolReply } from "../src/testing/answering-server.ts";
import { mockOracleResponder } from "../src/testing/fault-server.ts";
import { runCli } from "./support/run-cli.ts";

const work = mkdtempSync(join(tmpdir(), "toolgym-resume-lock-"));
after(() => rmSync(work, { recursive: true, force: true }));

const OUTAGE = () => ({ status: 503, body: '{"error": {"message": "the server is restarting"}}' });
const results = (dir: string) =>
  readFileSync(join(dir, "results.jsonl"), "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as { id: string; status: string });

describe("eval --resume after an outage", () => {
  let server: Awaited<ReturnType<typeof startAnsweringServer>>;
  before(async () => {
    server = await startAnsweringServer(OUTAGE);
  });
  after(() => server.close());
  const evalArgs = (out: string, ...more: string[]) => [
    "eval",
    "--env",
    "mock",
    "--n",
    "4",
    "--model",
    "scripted",
    "--base-url",
    server.url,
    "--max-retries",
    "0",
    "--run-id",
    "outage",
    "--quiet",
    "--out",
    out,
    ...more,
  ];

  it("plays the errored episodes again once the server is back; the summary counts the rerun; --keep-errored keeps them", async () => {
    const out = join(work, "outage");
    server.setAnswer(OUTAGE);
    const down = await runCli(evalArgs(out));
    assert.equal(down.code, 1, down.stderr);
    assert.match(down.stderr, /every episode errored/);
    const dir = join(out, "mock--scripted", "outage");

    // --keep-errored: nothing to play, the errored episodes stay as they were.
    server.setAnswer((body) => ({ status: 200, body: toolReply(mockOracleResponder(body)) }));
    const kept = await runCli(evalArgs(out, "--resume", "--keep-errored"));
    assert.equal(kept.code, 1, kept.stderr);
    assert.deepEqual(
      results(dir).map((result) => result.status),
      ["errored", "errored", "errored", "errored"],
    );

    const back = await runCli(evalArgs(out, "--resume"));
    assert.equal(back.code, 0, back.stderr);
    assert.match(back.stdout, /\(resumed: 4 errored episodes were played again\)/);
    const lines = results(dir);
    assert.equal(lines.length, 4, "each episode once: the errored lines were replaced");
    assert.deepEqual(new Set(lines.map((result) => result.status)), new Set(["scored"]));
    const summary = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"));
    assert.deepEqual(
      { scored: summary.scored, errored: summary.errored, resumedFrom: summary.resumedFrom, rerun: summary.rerun },
      { scored: 4, errored: 0, resumedFrom: 0, rerun: 4 },
    );
    assert.match(summary.notes.join("\n"), /reran 4 errored episodes \(PROVIDER_RETRIES_EXHAUSTED ×4\)/);
    assert.equal(existsSync(join(dir, LOCK_FILE)), false, "the lock is released at the end");
  });

  it("--resume --run-id naming no run is a usage error (exit 2), not a new full run", async () => {
    const out = join(work, "typo");
    const first = await runCli(["eval", "--env", "mock", "--n", "2", "--run-id", "real", "--quiet", "--out", out]);
    assert.equal(first.code, 0, first.stderr);
    const typo = await runCli(["eval", "--env", "mock", "--n", "2", "--run-id", "reel", "--resume", "--quiet", "--out", out]);
    assert.equal(typo.code, 2, typo.stderr);
    assert.match(
      typo.stderr,
      /^toolgym: no run reel to resume under .*mock--scripted-oracle \(runs there: real\); check --run-id, or drop --resume to start a new run \[RESUME_NOT_FOUND\]$/m,
    );
    assert.equal(existsSync(join(out, "mock--scripted-oracle", "reel")), false);
    const alone = await runCli(["eval", "--env", "mock", "--n", "2", "--keep-errored", "--quiet", "--out", out]);
    assert.equal(alone.code, 2);
    assert.match(alone.stderr, /--keep-errored applies to --resume .*\[OPTION_CONFLICT\]/);
  });
});

describe("one writer per run", () => {
  it("a second writer while a live process holds the run exits 2 naming its pid; a stale lock of a dead pid is taken over and said so", async () => {
    const out = join(work, "locked");
    const args = ["eval", "--env", "mock", "--n", "3", "--run-id", "r", "--quiet", "--out", out];
    assert.equal((await runCli(args)).code, 0);
    const dir = join(out, "mock--scripted-oracle", "r");
    // Another process that holds the run: a live pid in its lock file.
    const holder = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      writeFileSync(join(dir, LOCK_FILE), `${holder.pid}\n`);
      const second = await runCli([...args, "--resume"]);
      assert.equal(second.code, 2, second.stderr);
      assert.match(
        second.stderr,
        new RegExp(`^toolgym: .*mock--scripted-oracle/r is being written by another toolgym process \\(pid ${holder.pid}\\);.* \\[RUN_LOCKED\\]$`, "m"),
      );
      assert.equal(readFileSync(join(dir, LOCK_FILE), "utf8").trim(), String(holder.pid), "the holder's lock is left alone");
    } finally {
      holder.kill();
    }
    // A lock left by a process that is gone (a SIGKILLed eval): its pid no longer runs.
    const gone = spawnSync("true");
    writeFileSync(join(dir, LOCK_FILE), `${gone.pid}\n`);
    const taken = await runCli([...args, "--resume"]);
    assert.equal(taken.code, 0, taken.stderr);
    assert.match(taken.stderr, new RegExp(`note: .*took over a stale writer lock of pid ${gone.pid} \\(that process is gone\\)`));
    assert.equal(existsSync(join(dir, LOCK_FILE)), false);
  });
});
