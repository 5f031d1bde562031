import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { writeMockTasks } from "../bench/python/mock-tasks.ts";
import { mockOracleResponder, startFaultServer, type FaultServer } from "../src/testing/fault-server.ts";

const ROOT = resolve(import.meta.dirname, "..");
const run = promisify(execFile);

describe("the Python peer harness of bench/harness.ts", () => {
  let server: FaultServer;
  let work: string;
  before(async () => {
    server = await startFaultServer({ respond: mockOracleResponder });
    work = mkdtempSync(join(tmpdir(), "toolgym-peer-"));
  });
  after(async () => {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("plays the exported mock tasks against the scripted server: two turns each, every answer right", async () => {
    const tasks = join(work, "tasks.jsonl");
    writeMockTasks(40, tasks);
    const out = join(work, "peer.jsonl");
    const { stdout } = await run(join(ROOT, ".venv/bin/python"), [
      join(ROOT, "bench/python/harness_peer.py"),
      "--base-url",
      server.url,
      "--tasks",
      tasks,
      "--out",
      out,
      "--concurrency",
      "8",
      "--warmup",
      "10",
    ]);
    const report = JSON.parse(stdout) as { episodes: number; turns: number; reward: number; cpu_seconds: number };
    assert.equal(report.episodes, 40);
    assert.equal(report.turns, 80);
    assert.equal(report.reward, 40);
    assert.ok(report.cpu_seconds > 0);
    // Warm-up (10) and measured (40) episodes, each with the lookup result and the finish call in its messages.
    const lines = readFileSync(out, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { messages: Array<{ role: string; content?: string }> });
    assert.equal(lines.length, 50);
    const answers = readFileSync(tasks, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => (JSON.parse(line) as { answer: string }).answer);
    for (const line of lines.slice(10)) {
      const tool = line.messages.find((message) => message.role === "tool");
      assert.ok(tool && answers.includes((JSON.parse(tool.content!) as { value: string }).value));
    }
    // The server saw exactly the peer's requests: 2 per episode, warm-up included, every one well-formed.
    assert.equal(server.counts.ok, 100);
    assert.equal(server.counts.invalid, 0);
  });
});
