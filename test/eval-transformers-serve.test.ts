import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { parseConfig } from "../src/core/index.ts";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { ChatTemplate } from "../src/data/chat-template.ts";
import { SegmentTokenizer } from "../src/data/tokenizer.ts";
import { startRecordingProxy, type RecordingProxy } from "../src/testing/recording-proxy.ts";
import { requirePython } from "./support/qwen3.ts";
import { startTransformersServe, tinyQwen3Dir } from "./support/tiny-qwen3.ts";

const ROOT = resolve(import.meta.dirname, "..");

interface Result {
  id: string;
  status: string;
  reward: number | null;
  error: { code: string; message: string } | null;
  format_errors: number;
  turns: number;
  info: {
    trajectory: {
      steps: Array<{ name: string; arguments: Record<string, unknown>; result: string }>;
      formatErrors: { count: number; byKind: Record<string, number> };
    };
  };
}

async function toolgymEval(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, "bin/toolgym.js"), "eval", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const code = await new Promise<number | null>((done) => child.once("exit", done));
  return { code, stdout, stderr };
}

function readRun(out: string, label: string): { results: Result[]; metadata: Record<string, unknown> } {
  const parent = join(out, `mock--${label}`);
  const [runId] = readdirSync(parent);
  const directory = join(parent, runId as string);
  const results = readFileSync(join(directory, "results.jsonl"), "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Result);
  return { results, metadata: JSON.parse(readFileSync(join(directory, "metadata.json"), "utf8")) };
}

describe("toolgym eval against transformers serve (tiny Qwen3 fine-tuned to call tools)", () => {
  let modelDir: string;
  let serve: Awaited<ReturnType<typeof startTransformersServe>>;
  let proxy: RecordingProxy;
  let out: string;
  before(async () => {
    modelDir = tinyQwen3Dir(requirePython(), { toolCallSft: true });
    serve = await startTransformersServe(requirePython(), modelDir);
    proxy = await startRecordingProxy(serve.url);
    out = mkdtempSync(join(tmpdir(), "toolgym-eval-serve-"));
  });
  after(async () => {
    await proxy?.close();
    await serve?.stop();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it("sends well-formed requests with tools, template kwargs and sampling; executes the parsed tool calls; records every episode", async () => {
    const run = await toolgymEval([
      "--env",
      "mock",
      "--base-url",
      `${proxy.url}/v1`,
      "--model",
      modelDir,
      "--label",
      "tiny",
      "--n",
      "3",
      "--concurrency",
      "2",
      "--temperature",
      "0",
      "--max-tokens",
      "48",
      "--chat-template-kwargs",
      '{"enable_thinking": false}',
      "--max-turns",
      "4",
      "--max-retries",
      "1",
      "--out",
      out,
      "--quiet",
    ]);
    assert.equal(run.code, 0, run.stderr);
    const { results, metadata } = readRun(out, "tiny");
    assert.equal(results.length, 3);
    assert.deepEqual((metadata.counts as Record<string, number>).scored + (metadata.counts as Record<string, number>).errored, 3);

    // Requests: the environment's prompt and tools, the template kwargs and sampling, nothing the server rejects.
    const chats = proxy.exchanges.filter((exchange) => exchange.path === "/v1/chat/completions");
    assert.ok(chats.length >= 3);
    const first = chats[0]!.request as Record<string, unknown>;
    const prompt = mockEnvironment.start(mockEnvironment.generate({ split: "eval", seed: 0, index: 0, config: { keys: 5 } }));
    assert.deepEqual(first.tools, prompt.tools);
    assert.deepEqual(first.chat_template_kwargs, { enable_thinking: false });
    assert.equal(first.temperature, 0);
    assert.equal(first.max_tokens, 48);
    assert.equal(first.model, modelDir);
    assert.ok(!("top_k" in first) && !("tool_choice" in first));
    for (const chat of chats) assert.equal(chat.status, 200, JSON.stringify(chat.response).slice(0, 500));

    // The chat template was applied with the tools: the server's prompt token count equals our own rendering.
    const byPrompt = chats.find((chat) => JSON.stringify((chat.request as { messages: unknown[] }).messages) === JSON.stringify(prompt.messages));
    assert.ok(byPrompt, "the first turn of task 0 was sent with the environment's prompt");
    const rendered = ChatTemplate.fromDirectory(modelDir).render(prompt.messages, {
      tools: prompt.tools,
      addGenerationPrompt: true,
      templateKwargs: { enable_thinking: false },
    });
    assert.ok(rendered.includes("<tools>") && rendered.endsWith("<think>\n\n</think>\n\n"));
    const promptTokens = SegmentTokenizer.fromDirectory(modelDir).encodeUncached(rendered).length;
    assert.equal((byPrompt.response as { usage: { prompt_tokens: number } }).usage.prompt_tokens, promptTokens);

    // The fine-tuned model's tool calls come back parsed, with finish_reason tool_calls, and are executed.
    const parsed = chats.filter((chat) => {
      const choice = (
        chat.response as { choices: Array<{ finish_reason: string; message: { tool_calls?: Array<{ function: { name: string; arguments: string } }> } }> }
      ).choices[0]!;
      return choice.finish_reason === "tool_calls" && (choice.message.tool_calls?.length ?? 0) > 0;
    });
    assert.ok(parsed.length >= 3, `${parsed.length} responses carried parsed tool calls`);
    for (const result of results) {
      const lookup = result.info.trajectory.steps.find((step) => step.name === "lookup");
      assert.ok(lookup, `episode ${result.id} executed a lookup`);
      assert.equal(lookup.arguments.key, "kalo");
      assert.match(lookup.result, /kalo/);
      assert.equal(result.format_errors, result.info.trajectory.formatErrors.count);
      if (result.status === "errored") assert.ok(result.error && result.error.message.length > 0);
      else assert.equal(typeof result.reward, "number");
    }
  });

  it("runs search_plan_act end to end: its tools go over the wire and every episode is scored or errored with its reason", async () => {
    const before = proxy.exchanges.length;
    const run = await toolgymEval([
      "--env",
      "search_plan_act",
      "--base-url",
      `${proxy.url}/v1`,
      "--model",
      modelDir,
      "--label",
      "tiny",
      "--n",
      "2",
      "--temperature",
      "0",
      "--max-tokens",
      "48",
      "--chat-template-kwargs",
      '{"enable_thinking": false}',
      "--max-turns",
      "3",
      "--max-retries",
      "1",
      "--out",
      out,
      "--quiet",
    ]);
    const parent = join(out, "search_plan_act--tiny");
    const directory = join(parent, readdirSync(parent)[0] as string);
    const results = readFileSync(join(directory, "results.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Result);
    const metadata = JSON.parse(readFileSync(join(directory, "metadata.json"), "utf8"));
    assert.equal(results.length, 2);
    const env = getEnvironment("search_plan_act");
    const episode = env.start(env.generate({ split: env.defaultSplit, seed: 0, index: 0, config: parseConfig(env.id, env.configSchema, "{}") }));
    const requests = proxy.exchanges.slice(before).filter((exchange) => exchange.path === "/v1/chat/completions");
    assert.ok(requests.length >= 2);
    for (const request of requests) assert.deepEqual((request.request as { tools: unknown }).tools, episode.tools);
    let errored = 0;
    for (const result of results) {
      assert.equal(result.format_errors, result.info.trajectory.formatErrors.count);
      if (result.status === "errored") {
        errored++;
        assert.equal(result.reward, null);
        // transformers serve answers 500 when the model's <tool_call> JSON is malformed; the harness retries, then records why.
        assert.match(result.error?.message ?? "", /attempts; last error: /);
      } else assert.equal(typeof result.reward, "number");
    }
    assert.deepEqual(metadata.counts, { scored: 2 - errored, errored });
    // A run whose every episode errored is a failed run: exit 1 with the reasons; otherwise exit 0.
    assert.equal(run.code, errored === 2 ? 1 : 0, run.stderr);
    if (errored === 2) assert.match(run.stderr, /every episode errored .*PROVIDER_RETRIES_EXHAUSTED/);
  });

  it("counts truncated replies (finish_reason length) as format errors", async () => {
    const run = await toolgymEval([
      "--env",
      "mock",
      "--base-url",
      `${proxy.url}/v1`,
      "--model",
      modelDir,
      "--label",
      "truncated",
      "--n",
      "2",
      "--temperature",
      "0",
      "--max-tokens",
      "3",
      "--max-turns",
      "2",
      "--out",
      out,
      "--quiet",
    ]);
    assert.equal(run.code, 0, run.stderr);
    const { results } = readRun(out, "truncated");
    assert.equal(results.length, 2);
    for (const result of results) {
      assert.equal(result.status, "scored");
      assert.equal(result.turns, 2);
      assert.equal(result.info.trajectory.formatErrors.byKind.truncated, 2);
      assert.equal(result.format_errors, 2);
    }
  });
});
