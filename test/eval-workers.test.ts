import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { UsageError, parseConfig } from "../src/core/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { defaultWorkers, runEvaluation, MAX_WORKERS } from "../src/eval/run-evaluation.ts";
import { mockOracleResponder, startFaultServer, type FaultServer } from "../src/testing/fault-server.ts";

const ROOT = resolve(import.meta.dirname, "..");
const N = 160;
const env = getEnvironment("mock");
const config = parseConfig("mock", env.configSchema, "{}");

function resultsPath(out: string, label = "det"): string {
  return join(out, `mock--${label}`, "run", "results.jsonl");
}

function lineCount(path: string): number {
  if (!existsSync(path)) return 0;
  return readFileSync(path, "utf8").split("\n").length - 1;
}

/** Records by id without the wall-clock timing (the only field that differs between runs). */
function recordsById(path: string): Map<string, unknown> {
  const records = new Map<string, unknown>();
  for (const line of readFileSync(path, "utf8").trimEnd().split("\n")) {
    const record = JSON.parse(line) as { id: string; info: { timing?: unknown } };
    assert.ok(!records.has(record.id), `duplicate episode ${record.id}`);
    delete record.info.timing;
    records.set(record.id, record);
  }
  return records;
}

function assertSameRecords(actualPath: string, expectedPath: string, size: number): void {
  const expected = recordsById(expectedPath);
  const actual = recordsById(actualPath);
  assert.equal(expected.size, size);
  assert.equal(actual.size, size);
  for (const [id, record] of expected) assert.deepEqual(actual.get(id), record, `episode ${id} differs`);
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((done) => child.once("exit", (code) => done(code)));
}

describe("eval --workers", () => {
  let server: FaultServer;
  let work: string;
  before(async () => {
    server = await startFaultServer({ respond: mockOracleResponder, latencyMs: 5 });
    work = mkdtempSync(join(tmpdir(), "toolgym-eval-workers-"));
  });
  after(async () => {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  });

  const evaluate = (out: string, workers: number, extra: Partial<Parameters<typeof runEvaluation>[0]> = {}) =>
    runEvaluation({
      rows: [{ env, config, split: "eval", seed: 3, n: N, samples: 2 }],
      models: [{ kind: "openai", label: "det", name: "scripted", baseUrls: [server.url], sampling: { temperature: 1 } }],
      out,
      runId: "run",
      concurrency: 16,
      workers,
      quiet: true,
      ...extra,
    });

  it("the default is every core but one, at least 1 and capped", () => {
    assert.equal(defaultWorkers(1), 1);
    assert.equal(defaultWorkers(2), 1);
    assert.equal(defaultWorkers(8), 7);
    assert.equal(defaultWorkers(256), MAX_WORKERS);
  });

  it("1 and 2 worker threads write the same results (as sets) and the same summary and provider counters", async () => {
    const [one] = await evaluate(join(work, "one"), 1);
    const [two] = await evaluate(join(work, "two"), 2);
    assertSameRecords(resultsPath(join(work, "two")), resultsPath(join(work, "one")), 2 * N);
    assert.equal(two!.status, "complete");
    assert.equal(two!.mean, one!.mean);
    assert.equal(two!.scored, 2 * N);
    const metadata = (out: string) => JSON.parse(readFileSync(join(out, "mock--det", "run", "metadata.json"), "utf8"));
    const provider = metadata(join(work, "two")).provider;
    // Two model turns per mock episode, one request each, all counted across the two threads' clients.
    assert.equal(provider.requests, 2 * 2 * N);
    assert.deepEqual(provider, metadata(join(work, "one")).provider);
    assert.deepEqual(
      provider.replicas.map((replica: { requests: number }) => replica.requests),
      [2 * 2 * N],
    );
  });

  it("an abort stops the threads with a partial, resumable run; --resume on threads completes it identically", async () => {
    const out = join(work, "aborted");
    const controller = new AbortController();
    let seen = 0;
    const [partial] = await evaluate(out, 2, {
      signal: controller.signal,
      onEpisode: () => {
        if (++seen === 40) controller.abort(new Error("test stop"));
      },
    });
    assert.equal(partial!.status, "interrupted");
    const saved = lineCount(resultsPath(out));
    assert.ok(saved >= 40 && saved < 2 * N, `${saved} lines after the abort`);
    const [resumed] = await evaluate(out, 2, { resume: true });
    assert.equal(resumed!.status, "complete");
    assert.equal(resumed!.resumedFrom, saved);
    assertSameRecords(resultsPath(out), resultsPath(join(work, "one")), 2 * N);
  });

  it("refuses an environment object the worker threads cannot rebuild from the registry", async () => {
    const copy = { ...env };
    await assert.rejects(
      runEvaluation({
        rows: [{ env: copy, config, split: "eval", seed: 0, n: 4 }],
        models: [{ kind: "scripted" }],
        out: join(work, "copy"),
        workers: 2,
        quiet: true,
      }),
      (error: unknown) => error instanceof UsageError && error.code === "WORKERS_UNREGISTERED_ENV",
    );
  });

  it("a CLI run with --workers 2 killed twice and resumed ends with exactly the episodes of an uninterrupted run", async () => {
    const args = (out: string, extra: string[] = []) => [
      join(ROOT, "bin/toolgym.js"),
      "eval",
      "--env",
      "mock",
      "--base-url",
      server.url,
      "--model",
      "scripted",
      "--label",
      "det",
      "--n",
      String(N),
      "--samples",
      "2",
      "--seed",
      "3",
      "--temperature",
      "1",
      "--concurrency",
      "16",
      "--workers",
      "2",
      "--out",
      out,
      "--run-id",
      "run",
      "--quiet",
      ...extra,
    ];
    const killed = join(work, "killed");
    const kills: number[] = [];
    for (const [attempt, target] of [40, 150].entries()) {
      const child = spawn(process.execPath, args(killed, attempt > 0 ? ["--resume"] : []), { stdio: "ignore" });
      const finished = exited(child);
      while (lineCount(resultsPath(killed)) < target && child.exitCode === null) await new Promise((wait) => setTimeout(wait, 5));
      child.kill("SIGKILL");
      await finished;
      kills.push(lineCount(resultsPath(killed)));
      assert.ok(kills[attempt]! < 2 * N, `kill ${attempt + 1} landed after the run finished`);
    }
    assert.ok(kills[0]! < kills[1]!, `kills landed at ${kills.join(", ")} lines`);
    const resumed = spawn(process.execPath, args(killed, ["--resume"]), { stdio: "ignore" });
    assert.equal(await exited(resumed), 0);
    assertSameRecords(resultsPath(killed), resultsPath(join(work, "one")), 2 * N);
    const metadata = JSON.parse(readFileSync(join(killed, "mock--det", "run", "metadata.json"), "utf8"));
    assert.equal(metadata.status, "complete");
  });
});
