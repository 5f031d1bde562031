import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { memoryStream } from "../src/cli/io.ts";
import { parseConfig } from "../src/core/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { createProgress } from "../src/eval/progress.ts";
import { runEvaluation } from "../src/eval/run-evaluation.ts";
import { runPool } from "../src/eval/worker-pool.ts";
import { readMetadata, readSummary } from "../src/runs/reader.ts";
import { mockOracleResponder, startFaultServer } from "../src/testing/fault-server.ts";
import { runCli } from "./support/run-cli.ts";

/** The run directories (holding metadata.json) two levels below `root`: `<env>--<label>/<run id>`. */
function runDirectories(root: string): string[] {
  return readdirSync(root)
    .flatMap((pair) => readdirSync(join(root, pair)).map((run) => join(root, pair, run)))
    .sort();
}

function resultLines(directory: string): string[] {
  const text = readFileSync(join(directory, "results.jsonl"), "utf8");
  assert.ok(text === "" || text.endsWith("\n"), "the file ends with a whole line");
  return text.split("\n").filter(Boolean);
}

/** `promise`, or a failure saying `why` if it has not settled within `ms`: a bound on a hang, never a wait. */
async function withDeadline<T>(promise: Promise<T>, ms: number, why: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(why)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

describe("eval: one statistics module", () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), "toolgym-eval-run-"));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("summary.json's CI equals `toolgym report`'s CI for the same run", async () => {
    const out = join(root, "ci");
    // 8 episodes in flight: results.jsonl is in completion order, not task order; both sides must not care.
    const evaluated = await runCli([
      "eval",
      "--env",
      "search_plan_act",
      "--agent",
      "noisy_oracle_0.3",
      "--n",
      "60",
      "--concurrency",
      "8",
      "--out",
      out,
      "--quiet",
    ]);
    assert.equal(evaluated.code, 0, evaluated.stderr);
    const [directory] = runDirectories(out);
    const summary = readSummary(directory as string);
    assert.equal(summary.status, "complete");
    assert.ok(summary.ciLow !== null && summary.ciHigh !== null && summary.mean !== null);
    assert.ok(summary.ciLow < summary.mean && summary.mean < summary.ciHigh, `a real interval: ${summary.ciLow} < ${summary.mean} < ${summary.ciHigh}`);
    const reported = await runCli(["report", out, "--format", "json"]);
    assert.equal(reported.code, 0, reported.stderr);
    const report = JSON.parse(reported.stdout) as { rows: Array<{ metric: string; cells: Array<{ mean: number; low: number; high: number; n: number }> }> };
    const cell = report.rows.find((row) => row.metric === "reward")?.cells[0];
    assert.ok(cell, "the report has a reward row");
    assert.equal(cell.n, summary.scored);
    assert.equal(cell.mean, summary.mean);
    assert.equal(cell.low, summary.ciLow);
    assert.equal(cell.high, summary.ciHigh);
  });
});

describe("eval: progress bar", () => {
  it("draws on the stream it is given, says ETA … until an episode is done, and counts errors", () => {
    const stream = memoryStream();
    const progress = createProgress({ label: "mock scripted", total: 5, stream, initial: 2 });
    progress.tick();
    progress.tick({ errored: true });
    progress.tick();
    progress.stop();
    const lines = stream.text().split("\n").filter(Boolean);
    assert.match(
      lines[0] as string,
      /^mock scripted .* 2\/5 {2}0\.0 ep\/s {2}ETA … {2}errors 0$/,
      "a resumed run starts at its episodes on disk, with no made-up ETA",
    );
    assert.match(lines.at(-1) as string, /^mock scripted .* 5\/5 {2}\d+\.\d ep\/s {2}ETA 0s {2}errors 1$/);
  });

  it("`toolgym eval` draws it on the command's stderr, and --quiet turns it off", async () => {
    const out = mkdtempSync(join(tmpdir(), "toolgym-eval-progress-"));
    try {
      const shown = await runCli(["eval", "--env", "mock", "--n", "3", "--out", join(out, "a")]);
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stderr, /^mock scripted-\S+ .* 3\/3 {2}[\d.]+ ep\/s {2}ETA 0s {2}errors 0$/m);
      assert.doesNotMatch(shown.stdout, /ep\/s/, "the bar stays off stdout");
      const quiet = await runCli(["eval", "--env", "mock", "--n", "3", "--out", join(out, "b"), "--quiet"]);
      assert.doesNotMatch(quiet.stderr, /ep\/s/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it("draws nothing without a stream", () => {
    const progress = createProgress({ label: "x", total: 2 });
    progress.tick();
    progress.stop();
  });
});

describe("eval: a failing worker cancels the run", () => {
  it("the pool skips what has not started, aborts what runs, and rethrows only once every started call has settled", async () => {
    const started: number[] = [];
    let settled = 0;
    let sawAbort = 0;
    const failure = new Error("worker 1 failed");
    // No timers: item 1 fails once all four slots are busy, and the other three wait for the abort.
    let allBusy = () => undefined as void;
    const busy = new Promise<void>((resolve) => (allBusy = resolve));
    await assert.rejects(
      runPool(
        Array.from({ length: 40 }, (_, index) => index),
        { concurrency: 4 },
        async (item, signal) => {
          started.push(item);
          if (started.length === 4) allBusy();
          try {
            if (item === 1) {
              await busy;
              throw failure;
            }
            await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
            if (signal.aborted) sawAbort++;
          } finally {
            settled++;
          }
        },
      ),
      (error: unknown) => {
        assert.equal(error, failure);
        assert.equal(settled, started.length, "no call is still running when the error comes out");
        return true;
      },
    );
    assert.deepEqual(started, [0, 1, 2, 3], "nothing starts after the failure");
    assert.equal(sawAbort, 3, "the calls in flight saw the abort");
  });

  it("takes items as calls finish: a pool over an endless generator holds only its concurrency", async () => {
    let taken = 0;
    function* endless() {
      for (;;) {
        taken++;
        yield taken;
      }
    }
    const controller = new AbortController();
    let done = 0;
    await runPool(endless(), { concurrency: 3, signal: controller.signal }, async () => {
      await Promise.resolve();
      if (++done === 10) controller.abort();
    });
    assert.equal(done, 12, "the ten calls and the two in flight when the tenth aborted");
    assert.equal(taken, 12, "no item is taken ahead of a free slot");
  });

  it("an episode that throws leaves whole lines, no write after the file is closed, a `failed` run, and a run that --resume completes", async () => {
    const server = await startFaultServer({ respond: mockOracleResponder, latencyMs: 40 });
    const out = mkdtempSync(join(tmpdir(), "toolgym-eval-cancel-"));
    try {
      const env = getEnvironment("mock");
      const options = {
        rows: [{ env, config: parseConfig("mock", env.configSchema, "{}"), split: "eval", seed: 0, n: 40 }],
        models: [{ kind: "openai" as const, label: "slow", name: "scripted", baseUrls: [server.url], maxRetries: 0 }],
        out,
        concurrency: 8,
        runId: "run",
      };
      let finished = 0;
      const failed = assert.rejects(
        runEvaluation({
          ...options,
          onEpisode: () => {
            if (++finished < 3) return;
            // No model answer from now on: an episode still in flight can end only by the run aborting it.
            server.hold();
            throw new Error("the third episode's observer failed");
          },
        }),
        /the third episode's observer failed/,
      );
      await withDeadline(failed, 60_000, "runEvaluation did not return after an observer failed (an episode it did not abort?)");
      const directory = join(out, "mock--slow", "run");
      const lines = resultLines(directory);
      const requests = server.counts.requests;
      // An episode left running would keep its request open (unanswered) forever; the run closes each one.
      await withDeadline(server.idle(), 60_000, "a model request stayed open: an episode kept running after runEvaluation returned");
      assert.deepEqual(resultLines(directory), lines, "nothing is written after runEvaluation returns");
      assert.equal(server.counts.requests, requests, "no model request after runEvaluation returns");
      assert.ok(lines.length >= 3 && lines.length < 40, `${lines.length} episodes on disk`);
      for (const line of lines) assert.equal(typeof (JSON.parse(line) as { id: unknown }).id, "string");
      const metadata = readMetadata(directory);
      assert.equal(metadata.status, "failed");
      assert.match(metadata.failure?.message ?? "", /the third episode's observer failed/);

      server.release();
      const [summary] = await runEvaluation({ ...options, resume: true });
      assert.equal(summary?.status, "complete");
      assert.equal(summary?.resumedFrom, lines.length);
      const ids = resultLines(directory).map((line) => (JSON.parse(line) as { id: string }).id);
      assert.equal(new Set(ids).size, 40);
      assert.equal(ids.length, 40, "no episode lost or duplicated");
      assert.equal(readMetadata(directory).status, "complete");
    } finally {
      await server.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe("eval: a dead model server", () => {
  let out: string;
  before(() => {
    out = mkdtempSync(join(tmpdir(), "toolgym-eval-dead-"));
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  it("ends the run `failed` with the error codes, not `complete`", async () => {
    const env = getEnvironment("mock");
    // Port 1 on the loopback: nothing listens, every connection is refused.
    const [summary] = await runEvaluation({
      rows: [{ env, config: parseConfig("mock", env.configSchema, "{}"), split: "eval", seed: 0, n: 3 }],
      models: [{ kind: "openai", label: "dead", name: "m", baseUrls: ["http://127.0.0.1:1/v1"], maxRetries: 0, backoffMs: 1 }],
      out: join(out, "library"),
    });
    assert.ok(summary);
    assert.equal(summary.status, "failed");
    assert.deepEqual([summary.scored, summary.errored], [0, 3]);
    const metadata = readMetadata(summary.dir);
    assert.equal(metadata.status, "failed");
    assert.equal(metadata.failure?.code, "ALL_EPISODES_ERRORED");
    assert.match(metadata.failure?.message ?? "", /^all 3 episodes errored: [A-Z_]+ ×3 \(.+\)$/);
    assert.equal(readSummary(summary.dir).status, "failed");
  });

  it("makes `toolgym eval` exit non-zero with the errored reasons", async () => {
    const result = await runCli([
      "eval",
      "--env",
      "mock",
      "--base-url",
      "http://127.0.0.1:1/v1",
      "--model",
      "m",
      "--n",
      "2",
      "--max-retries",
      "0",
      "--no-preflight",
      "--quiet",
      "--out",
      join(out, "cli"),
    ]);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /errored/);
    assert.match(result.stderr, /[A-Z_]{6,} ×2/);
  });
});
