import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { ProviderError, defineTool } from "../src/core/index.ts";
import { createOpenAIAgent } from "../src/agents/openai/agent.ts";
import { ReplicaPool } from "../src/agents/openai/replicas.ts";
import { RequestBodyBuilder } from "../src/agents/openai/request-body.ts";

const tools = [
  defineTool({ name: "lookup", description: "Look up a key.", parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] } }),
];

describe("RequestBodyBuilder", () => {
  it("produces JSON.stringify's bytes while serialising each message only once", () => {
    const builder = new RequestBodyBuilder("qwen/Qwen3-4B");
    const messages: Array<Record<string, unknown>> = [
      { role: "system", content: "Be brief." },
      { role: "user", content: 'Key "kalo"? ü \u2028' },
    ];
    const fields = [
      ["temperature", 0.6],
      ["top_k", undefined],
      ["seed", 7],
      ["chat_template_kwargs", { enable_thinking: false }],
    ] as const;
    let calls = 0;
    const counted = { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "lookup", arguments: "{}" } }] };
    const wrapped = { toJSON: () => (calls++, counted) } as unknown as Record<string, unknown>;
    const plain = () => messages.map((message) => (message === wrapped ? counted : message));
    const expected = () =>
      JSON.stringify({
        model: "qwen/Qwen3-4B",
        messages: plain(),
        tools,
        temperature: 0.6,
        top_k: undefined,
        seed: 7,
        chat_template_kwargs: { enable_thinking: false },
      });
    assert.equal(builder.build(messages, tools, fields), expected());
    messages.push(wrapped);
    messages.push({ role: "tool", tool_call_id: "c", name: "lookup", content: '{"value":"x"}' });
    assert.equal(builder.build(messages, tools, fields), expected());
    assert.equal(builder.build(messages, tools, fields), expected());
    assert.equal(calls, 1, "a message already sent is not serialised again");
    // A view that rebuilds messages (new objects, fewer of them) and a text request without tools.
    const view = [{ role: "user", content: "only this" }];
    assert.equal(builder.build(view, undefined, []), JSON.stringify({ model: "qwen/Qwen3-4B", messages: view }));
  });
});

describe("pool transport", () => {
  it("posts to BASE/chat/completions with the key, classifies refused connections, time-outs and aborts", async () => {
    const seen: Array<{ url: string | undefined; authorization: string | undefined; body: string }> = [];
    const server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        seen.push({ url: request.url, authorization: request.headers.authorization, body });
        if (body.includes("hang")) return;
        response
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ choices: [{ finish_reason: "stop", message: { role: "assistant", content: "left" } }] }));
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const pool = new ReplicaPool({ baseUrls: [url], apiKey: "sk-pool", timeoutMs: 300 });
    try {
      const agent = createOpenAIAgent({ pool, model: "m", episodeKey: "e", maxRetries: 0 });
      const turn = await agent.act({ messages: [{ role: "user", content: "go" }], tools, protocol: "text" });
      assert.equal(turn.message.content, "left");
      assert.equal(seen[0]?.url, "/v1/chat/completions");
      assert.equal(seen[0]?.authorization, "Bearer sk-pool");
      assert.deepEqual(JSON.parse(seen[0]!.body), { model: "m", messages: [{ role: "user", content: "go" }] });

      const hang = { messages: [{ role: "user" as const, content: "hang" }], tools, protocol: "text" as const };
      await assert.rejects(agent.act(hang), (error: unknown) => {
        assert.ok(ProviderError.isInstance(error));
        assert.match((error as Error).message, /after 1 attempts; last error: timeout talking to/);
        return true;
      });
      const controller = new AbortController();
      const pending = agent.act({ ...hang, signal: controller.signal });
      setTimeout(() => controller.abort(), 20);
      await assert.rejects(pending, (error: unknown) => (error as ProviderError).code === "PROVIDER_ABORTED");
      // One signal over several requests (a run's): a finished one is left alone, every one in flight aborts.
      const shared = new AbortController();
      assert.equal((await agent.act({ messages: [{ role: "user", content: "go" }], tools, protocol: "text", signal: shared.signal })).message.content, "left");
      const inFlight = [agent.act({ ...hang, signal: shared.signal }), agent.act({ ...hang, signal: shared.signal })];
      setTimeout(() => shared.abort(), 20);
      for (const each of inFlight) await assert.rejects(each, (error: unknown) => (error as ProviderError).code === "PROVIDER_ABORTED");
    } finally {
      await pool.close();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
    const refused = new ReplicaPool({ baseUrls: [url], timeoutMs: 1000 });
    const agent = createOpenAIAgent({ pool: refused, model: "m", episodeKey: "e", maxRetries: 0 });
    await assert.rejects(agent.act({ messages: [{ role: "user", content: "go" }], tools, protocol: "tools" }), (error: unknown) => {
      assert.match((error as Error).message, /last error: connection \(ECONNREFUSED\) talking to/);
      return true;
    });
    await refused.close();
  });
});
