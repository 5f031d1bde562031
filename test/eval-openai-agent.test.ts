import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ProviderError, defineTool } from "../src/core/index.ts";
import { createOpenAIAgent, createProviderStats } from "../src/agents/openai/agent.ts";
import { parseChatCompletion, type ChatCompletionLike } from "../src/agents/openai/parse-reply.ts";
import { ReplicaPool, redactBaseUrl } from "../src/agents/openai/replicas.ts";

const tools = [
  defineTool({ name: "lookup", description: "Look up a key.", parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] } }),
];
const messages = [{ role: "user" as const, content: "What is the value of key 'kalo'?" }];

function reply(message: Record<string, unknown>, finish = "stop"): ChatCompletionLike {
  return {
    choices: [{ finish_reason: finish, message: { role: "assistant", ...message } }],
    usage: { prompt_tokens: 7, completion_tokens: 3 },
  } as unknown as ChatCompletionLike;
}

describe("parseChatCompletion", () => {
  it("reads tool calls, keeps arguments as the JSON string, and reads reasoning ?? reasoning_content", () => {
    const turn = parseChatCompletion(
      reply(
        { content: null, reasoning: "think", tool_calls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: '{"key": "kalo"}' } }] },
        "tool_calls",
      ),
      { protocol: "tools", callIdPrefix: "x" },
    );
    assert.deepEqual(turn.message.tool_calls, [{ id: "c1", type: "function", function: { name: "lookup", arguments: '{"key": "kalo"}' } }]);
    assert.equal(turn.message.reasoning_content, "think");
    assert.equal(turn.formatErrors, undefined);
    assert.deepEqual(turn.usage, { promptTokens: 7, completionTokens: 3 });
    const old = parseChatCompletion(reply({ content: "hi", reasoning_content: "older server" }), { protocol: "tools", callIdPrefix: "x" });
    assert.equal(old.message.reasoning_content, "older server");
  });

  it("recovers hermes <tool_call> text left in content and counts it", () => {
    const turn = parseChatCompletion(reply({ content: 'ok <tool_call>\n{"name": "lookup", "arguments": {"key": "kalo"}}\n</tool_call>' }), {
      protocol: "tools",
      callIdPrefix: "p",
    });
    assert.deepEqual(turn.message.tool_calls, [{ id: "p_0", type: "function", function: { name: "lookup", arguments: '{"key":"kalo"}' } }]);
    assert.equal(turn.message.content, "ok");
    assert.deepEqual(
      turn.formatErrors?.map((error) => error.kind),
      ["unparsed_tool_call"],
    );
  });

  it("reports an unparseable <tool_call>, truncation, an empty reply and a missing choice as format errors", () => {
    const broken = parseChatCompletion(reply({ content: "<tool_call>{name: lookup}</tool_call>" }), { protocol: "tools", callIdPrefix: "p" });
    assert.equal(broken.message.tool_calls, undefined);
    assert.deepEqual(
      broken.formatErrors?.map((error) => error.kind),
      ["unparsed_tool_call"],
    );
    assert.match(broken.formatErrors?.[0]?.message ?? "", /valid JSON/);
    const truncated = parseChatCompletion(reply({ content: '<tool_call>{"name": "lo' }, "length"), { protocol: "tools", callIdPrefix: "p" });
    assert.deepEqual(
      truncated.formatErrors?.map((error) => error.kind),
      ["truncated"],
    );
    assert.deepEqual(
      parseChatCompletion(reply({ content: "" }), { protocol: "tools", callIdPrefix: "p" }).formatErrors?.map((error) => error.kind),
      ["empty_response"],
    );
    assert.deepEqual(
      parseChatCompletion({ choices: [] }, { protocol: "tools", callIdPrefix: "p" }).formatErrors?.map((error) => error.kind),
      ["empty_response"],
    );
    // A plain text reply is left to the rollout loop, which counts `no_tool_call`.
    assert.equal(parseChatCompletion(reply({ content: "I think" }), { protocol: "tools", callIdPrefix: "p" }).formatErrors, undefined);
  });

  it("text protocol: the content is the action and tool calls are ignored", () => {
    const turn = parseChatCompletion(reply({ content: "go forward", tool_calls: [{ id: "c", type: "function", function: { name: "x", arguments: "{}" } }] }), {
      protocol: "text",
      callIdPrefix: "p",
    });
    assert.equal(turn.message.content, "go forward");
    assert.equal(turn.message.tool_calls, undefined);
  });
});

describe("ReplicaPool", () => {
  it("spreads by least outstanding requests and takes a failing replica out until its cool-down ends", () => {
    let now = 1000;
    const pool = new ReplicaPool({ baseUrls: ["http://a/v1", "http://b/v1"], apiKey: "k", cooldownMs: 100, now: () => now });
    const first = pool.acquire();
    const second = pool.acquire();
    assert.notEqual(first.baseUrl, second.baseUrl);
    pool.release(first, "failed");
    pool.release(second, "ok");
    for (let i = 0; i < 3; i++) assert.equal(pool.acquire().baseUrl, second.baseUrl);
    now += 150;
    assert.equal(pool.acquire().baseUrl, first.baseUrl, "back in rotation after the cool-down");
  });

  it("redacts credentials and query strings from base URLs", () => {
    assert.equal(redactBaseUrl("https://user:secret@example.com/v1?api_key=abc"), "https://example.com/v1");
  });
});

describe("createOpenAIAgent", () => {
  function fakeFetch(statuses: number[], bodies: unknown[]) {
    const requests: Array<Record<string, unknown>> = [];
    const fetchImpl = (async (_url: unknown, init?: RequestInit) => {
      requests.push(JSON.parse(String(init?.body)));
      const status = statuses.shift() ?? 200;
      const body = status === 200 ? bodies.shift() : { error: { message: `status ${status}` } };
      return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    }) as typeof fetch;
    return { requests, fetchImpl };
  }

  it("sends tools, sampling and chat_template_kwargs (top_k only when set), and retries transient failures", async () => {
    const { requests, fetchImpl } = fakeFetch(
      [503, 429, 200],
      [reply({ content: null, tool_calls: [{ id: "c", type: "function", function: { name: "lookup", arguments: "{}" } }] }, "tool_calls")],
    );
    const stats = createProviderStats();
    const pool = new ReplicaPool({ baseUrls: ["http://127.0.0.1:1/v1"], apiKey: "sk-test", fetch: fetchImpl });
    const agent = createOpenAIAgent({
      pool,
      model: "m",
      sampling: { temperature: 0.6, top_p: 0.95, max_tokens: 64, seed: 3 },
      chatTemplateKwargs: { enable_thinking: false },
      episodeKey: "e#0",
      backoffMs: 1,
      stats,
    });
    const turn = await agent.act({ messages, tools, protocol: "tools" });
    assert.equal(turn.message.tool_calls?.[0]?.function.name, "lookup");
    assert.equal(requests.length, 3);
    const body = requests[0]!;
    assert.deepEqual(body.tools, tools);
    assert.deepEqual(body.chat_template_kwargs, { enable_thinking: false });
    assert.equal(body.temperature, 0.6);
    assert.equal(body.top_p, 0.95);
    assert.equal(body.max_tokens, 64);
    assert.equal(typeof body.seed, "number");
    assert.ok(!("top_k" in body));
    assert.deepEqual(stats.failuresByReason, { PROVIDER_HTTP_503: 1, PROVIDER_HTTP_429: 1 });
  });

  it("omits tools in text protocol", async () => {
    const { requests, fetchImpl } = fakeFetch([200], [reply({ content: "left" })]);
    const agent = createOpenAIAgent({ pool: new ReplicaPool({ baseUrls: ["http://127.0.0.1:1/v1"], fetch: fetchImpl }), model: "m", episodeKey: "e" });
    assert.equal((await agent.act({ messages, tools, protocol: "text" })).message.content, "left");
    assert.ok(!("tools" in requests[0]!));
  });

  it("throws a non-retryable ProviderError at once on 400, and a retryable one when retries run out", async () => {
    const bad = fakeFetch([400], []);
    const agent = createOpenAIAgent({
      pool: new ReplicaPool({ baseUrls: ["http://127.0.0.1:1/v1"], apiKey: "sk-hidden", fetch: bad.fetchImpl }),
      model: "m",
      episodeKey: "e",
      backoffMs: 1,
    });
    await assert.rejects(agent.act({ messages, tools, protocol: "tools" }), (error: unknown) => {
      assert.ok(ProviderError.isInstance(error));
      assert.equal((error as ProviderError).retryable, false);
      assert.equal((error as ProviderError).code, "PROVIDER_HTTP_400");
      assert.ok(!(error as Error).message.includes("sk-hidden"));
      return true;
    });
    assert.equal(bad.requests.length, 1);
    const failing = fakeFetch([500, 500, 500], []);
    const retrying = createOpenAIAgent({
      pool: new ReplicaPool({ baseUrls: ["http://127.0.0.1:1/v1"], fetch: failing.fetchImpl }),
      model: "m",
      episodeKey: "e",
      backoffMs: 1,
      maxRetries: 2,
    });
    await assert.rejects(retrying.act({ messages, tools, protocol: "tools" }), (error: unknown) => {
      assert.equal((error as ProviderError).code, "PROVIDER_RETRIES_EXHAUSTED");
      assert.equal((error as ProviderError).retryable, true);
      assert.match((error as Error).message, /after 3 attempts; last error: HTTP 500/);
      return true;
    });
    assert.equal(failing.requests.length, 3);
  });
});
