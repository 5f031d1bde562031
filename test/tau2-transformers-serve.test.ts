import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { startRecordingProxy, type RecordingProxy } from "../src/testing/recording-proxy.ts";
import { requirePython } from "./support/qwen3.ts";
import { startTransformersServe, tinyQwen3Dir } from "./support/tiny-qwen3.ts";

/**
 * tau2 against a real `transformers serve`: a tiny random Qwen3 plays the simulated user (and would play the
 * agent). Its greedy replies are newlines only, and tau2's orchestrator fails a simulation whose message has
 * neither text nor tool calls (`validate()`; its runner retries, then records infrastructure_error, excluded
 * from the metrics): every episode ends errored with tau2_termination infrastructure_error. The user model's
 * requests carry what tau2's generate sends: temperature 0, the trial's seed, and chat_template_kwargs only
 * when the config asks.
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

describe("tau2_mock against transformers serve (a tiny Qwen3 as the simulated user)", { timeout: 1_800_000 }, () => {
  let modelDir: string;
  let serve: Awaited<ReturnType<typeof startTransformersServe>>;
  let proxy: RecordingProxy;
  let out: string;
  before(async () => {
    const python = requirePython();
    out = mkdtempSync(join(tmpdir(), "toolgym-tau2-serve-"));
    modelDir = tinyQwen3Dir(python);
    serve = await startTransformersServe(python, modelDir);
    proxy = await startRecordingProxy(serve.url);
  });
  after(async () => {
    await proxy?.close();
    await serve?.stop();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it("a whitespace-only user fails each simulation as tau2 does; the user requests carry tau2's fields", async () => {
    const runs = join(out, "runs");
    const args = (runId: string, config: Record<string, unknown>) => [
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
      "--config",
      JSON.stringify({ max_steps: 6, user_max_tokens: 16, user_model: `${proxy.url}/v1#${modelDir}`, ...config }),
      "--concurrency",
      "2",
      "--run-id",
      runId,
      "--out",
      runs,
      "--quiet",
      "--no-preflight",
    ];
    const userRequests = (from: number) =>
      proxy.exchanges
        .slice(from)
        .filter((exchange) => exchange.path === "/v1/chat/completions")
        .map((chat) => {
          assert.equal(chat.status, 200, JSON.stringify(chat.response).slice(0, 300));
          return chat.request as { messages: { content: string }[]; temperature?: number; seed?: number; chat_template_kwargs?: unknown };
        })
        .filter((request) => (request.messages[0]?.content ?? "").startsWith("# User Simulation Guidelines"));

    const first = await toolgym(args("e2e", {}));
    assert.equal(first.code, 1, first.stderr);
    assert.match(first.stderr, /every episode errored .*TAU2_EMPTY_MESSAGE ×2/);
    const results = readFileSync(join(runs, "tau2_mock--tiny", "e2e", "results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.equal(results.length, 2);
    for (const result of results) {
      assert.equal(result.status, "errored");
      assert.equal(result.reward, null, "excluded from the means, never a 0");
      const trajectory = result.info.trajectory;
      assert.equal(trajectory.diagnostics.tau2_termination, "infrastructure_error");
      assert.equal(trajectory.diagnostics.tau2_messages[0].content, "Hi! How can I help you today?");
    }
    // tau2's simulator prompt with the scenario, temperature 0, tau2's first trial seed of its base seed 300, no kwargs.
    // Each simulation raises and tau2's runner plays it 3 more times with the same seed (DEFAULT_RETRY_ATTEMPTS = 3):
    // 2 episodes × 4 attempts.
    const plain = userRequests(0);
    assert.equal(plain.length, 8);
    for (const request of plain) {
      assert.ok(request.messages[0]?.content.includes("<scenario>"));
      assert.equal(request.temperature, 0);
      assert.equal(request.seed, 626729);
      assert.equal(request.chat_template_kwargs, undefined);
    }

    // chat_template_kwargs only when asked for, as the config's own key.
    const seen = proxy.exchanges.length;
    const asked = await toolgym(args("kwargs", { user_chat_template_kwargs: { enable_thinking: false } }));
    assert.equal(asked.code, 1, asked.stderr);
    const withKwargs = userRequests(seen);
    assert.equal(withKwargs.length, 8);
    for (const request of withKwargs) assert.deepEqual(request.chat_template_kwargs, { enable_thinking: false });
  });
});
