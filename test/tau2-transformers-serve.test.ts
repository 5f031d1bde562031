import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { startRecordingProxy, type RecordingProxy } from "../src/testing/recording-proxy.ts";
import { requirePython } from "./support/qwen3.ts";
import { startTransformersServe } from "./support/tiny-qwen3.ts";

/**
 * tau2 against a real `transformers serve`: a tiny Qwen3 plays the agent and the simulated user. The
 * model is random (no tool-call fine-tune): the tool-call fine-tuned tiny model writes malformed tool
 * calls on tau2's prompts, which transformers serve answers with HTTP 500. Episodes run to tau2's
 * max_steps, are scored (0, not partial: a run cut short is not evaluated), resume, and are reported.
 */
const ROOT = resolve(import.meta.dirname, "..");

async function toolgym(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, "bin/toolgym.js"), ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const code = await new Promise<number | null>((done) => child.once("exit", done));
  return { code, stdout, stderr };
}

describe("tau2_mock against transformers serve (tiny Qwen3 as agent and as user)", { timeout: 1_800_000 }, () => {
  let modelDir: string;
  let serve: Awaited<ReturnType<typeof startTransformersServe>>;
  let proxy: RecordingProxy;
  let out: string;
  before(async () => {
    const python = requirePython();
    out = mkdtempSync(join(tmpdir(), "toolgym-tau2-serve-"));
    modelDir = join(out, "tiny-qwen3");
    const made = spawnSync(python, [join(ROOT, "scripts/make-tiny-qwen3.py"), modelDir], { encoding: "utf8" });
    if (made.status !== 0) throw new Error(`make-tiny-qwen3.py failed: ${made.stderr.slice(-2000)}`);
    serve = await startTransformersServe(python, modelDir);
    proxy = await startRecordingProxy(serve.url);
  });
  after(async () => {
    await proxy?.close();
    await serve?.stop();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it("completes episodes, resumes without new requests, and reports reward, pass and partial", async () => {
    const runs = join(out, "runs");
    const args = [
      "eval",
      "--env",
      "tau2_mock",
      "--n",
      "2",
      "--base-url",
      `${proxy.url}/v1`,
      "--model",
      modelDir,
      "--label",
      "tiny",
      "--temperature",
      "0",
      "--max-tokens",
      "16",
      "--max-retries",
      "1",
      "--chat-template-kwargs",
      '{"enable_thinking": false}',
      "--config",
      JSON.stringify({ max_steps: 6, user_max_tokens: 16, user_model: `${proxy.url}/v1#${modelDir}` }),
      "--concurrency",
      "2",
      "--run-id",
      "e2e",
      "--out",
      runs,
      "--quiet",
      "--no-preflight",
    ];
    const first = await toolgym(args);
    assert.equal(first.code, 0, first.stderr);
    const directory = join(runs, "tau2_mock--tiny", "e2e");
    const resultsText = readFileSync(join(directory, "results.jsonl"), "utf8");
    const results = resultsText
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.equal(results.length, 2);
    for (const result of results) {
      assert.equal(result.status, "scored", JSON.stringify(result.error));
      const trajectory = result.info.trajectory;
      assert.equal(trajectory.messages[1].content, "Hi! How can I help you today?");
      assert.equal(trajectory.messages[2].role, "user", "the simulated user answered the greeting");
      assert.equal(trajectory.reward.diagnostics.tau2_termination, "max_steps");
      assert.equal(result.metrics.partial, 0);
      assert.equal(result.metrics.pass, 0);
    }

    // The agent got tau2's system prompt and tools; the user model got tau2's simulator prompt with the scenario.
    const chats = proxy.exchanges.filter((exchange) => exchange.path === "/v1/chat/completions");
    for (const chat of chats) assert.equal(chat.status, 200, JSON.stringify(chat.response).slice(0, 300));
    const systems = chats.map((chat) => ((chat.request as { messages: { content: string }[] }).messages[0]?.content ?? "") as string);
    assert.ok(systems.some((text) => text.startsWith("<instructions>\nYou are a customer service agent")));
    assert.ok(systems.some((text) => text.startsWith("# User Simulation Guidelines") && text.includes("<scenario>")));

    // Resume: every episode is kept, no model call is made.
    const before = chats.length;
    const resumed = await toolgym([...args, "--resume"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(readFileSync(join(directory, "results.jsonl"), "utf8"), resultsText);
    assert.equal(proxy.exchanges.filter((exchange) => exchange.path === "/v1/chat/completions").length, before);

    // The report shows the partial share next to reward and pass.
    const report = await toolgym(["report", directory, "--format", "json"]);
    assert.equal(report.code, 0, report.stderr);
    const rows = JSON.parse(report.stdout).rows as { metric: string; cells: { mean: number }[] }[];
    const partial = rows.find((row) => row.metric === "partial");
    assert.ok(partial, "a partial row");
    assert.equal(partial.cells[0]?.mean, 0);
  });
});
