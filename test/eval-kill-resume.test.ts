import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { createRandom, parseConfig } from "../src/core/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { runEvaluation } from "../src/eval/run-evaluation.ts";
import { mockOracleResponder, startFaultServer, type FaultServer } from "../src/testing/fault-server.ts";

const ROOT = resolve(import.meta.dirname, "..");
const N = 300;

function evalArgs(server: FaultServer, out: string, extra: string[] = []): string[] {
  return [
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
    "--concurrency",
    "8",
    "--out",
    out,
    "--run-id",
    "run",
    "--quiet",
    ...extra,
  ];
}

function resultsPath(out: string): string {
  return join(out, "mock--det", "run", "results.jsonl");
}

function lineCount(path: string): number {
  if (!existsSync(path)) return 0;
  return readFileSync(path, "utf8").split("\n").length - 1;
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((done) => child.once("exit", (code) => done(code)));
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

describe("eval --resume after SIGKILL", () => {
  let server: FaultServer;
  let work: string;
  before(async () => {
    server = await startFaultServer({ respond: mockOracleResponder, latencyMs: 15 });
    work = mkdtempSync(join(tmpdir(), "toolgym-eval-kill-"));
  });
  after(async () => {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("a run killed three times at random points and resumed ends with exactly N episodes, identical to an uninterrupted run", async () => {
    const reference = join(work, "reference");
    const env = getEnvironment("mock");
    await runEvaluation({
      rows: [{ env, config: parseConfig("mock", env.configSchema, "{}"), split: "eval", seed: 0, n: N }],
      models: [{ kind: "openai", label: "det", name: "scripted", baseUrls: [server.url], sampling: {} }],
      out: reference,
      runId: "run",
      concurrency: 8,
      quiet: true,
    });

    const killed = join(work, "killed");
    const random = createRandom("kill-test", 1);
    const kills: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = lineCount(resultsPath(killed));
      const target = Math.min(N - 10, before + random.integer(20, 80));
      const child = spawn(process.execPath, evalArgs(server, killed, attempt > 0 ? ["--resume"] : []), { stdio: "ignore" });
      const finished = exited(child);
      while (lineCount(resultsPath(killed)) < target && child.exitCode === null) await new Promise((wait) => setTimeout(wait, 5));
      await new Promise((wait) => setTimeout(wait, random.integer(0, 20)));
      child.kill("SIGKILL");
      await finished;
      kills.push(lineCount(resultsPath(killed)));
      assert.ok(kills[attempt]! < N, `kill ${attempt + 1} landed before the run finished (${kills[attempt]} lines)`);
      recordsById(resultsPath(killed)); // no duplicate so far (a torn last line is allowed and repaired on resume)
    }
    const resumed = spawn(process.execPath, evalArgs(server, killed, ["--resume"]), { stdio: "ignore" });
    assert.equal(await exited(resumed), 0);

    const expected = recordsById(resultsPath(reference));
    const actual = recordsById(resultsPath(killed));
    assert.equal(expected.size, N);
    assert.equal(actual.size, N);
    for (const [id, record] of expected) assert.deepEqual(actual.get(id), record, `episode ${id} differs`);
    const metadata = JSON.parse(readFileSync(join(killed, "mock--det", "run", "metadata.json"), "utf8"));
    const referenceMetadata = JSON.parse(readFileSync(join(reference, "mock--det", "run", "metadata.json"), "utf8"));
    assert.equal(metadata.status, "complete");
    assert.deepEqual(metadata.counts, referenceMetadata.counts);
    assert.equal(metadata.generation.fingerprint, referenceMetadata.generation.fingerprint);
    assert.ok(kills[0]! > 0 && kills[0]! < kills[2]!, `kills landed at ${kills.join(", ")} lines`);
  });
});
