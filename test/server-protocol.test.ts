import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import { outcomeAnswer } from "../src/server/answers.ts";
import { OpenEnvConnection } from "../src/server/openenv-protocol.ts";
import { createProtocol, type Protocol } from "../src/server/protocol.ts";
import { runEpisode } from "../src/rollout/run-episode.ts";
import type { CallOutcome } from "../src/server/session-types.ts";
import { ask } from "../src/testing/protocol-client.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function request(protocol: Protocol) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => ask(protocol, method, path, body, headers);
}

describe("the protocol core (answer)", () => {
  it("lists every registered environment with its tool schemas", async () => {
    const protocol = createProtocol({ environments: ENVIRONMENTS });
    const call = request(protocol);
    const health = await call("GET", "/health");
    assert.equal(health.status, 200);
    assert.equal(health.json.status, "healthy");
    const envs = await call("GET", "/envs");
    assert.deepEqual(envs.json.environments.map((entry: Json) => entry.id).sort(), Object.keys(ENVIRONMENTS).sort());
    const mock = await call("GET", "/envs/mock");
    assert.deepEqual(
      mock.json.tools.map((tool: Json) => tool.function.name),
      ["lookup", "finish"],
    );
    assert.equal((await call("GET", "/envs/nope")).status, 404);
  });

  it("runs an episode: create → call → reward → close, matching the environment run in-process", async () => {
    const protocol = createProtocol({ environments: ENVIRONMENTS });
    const call = request(protocol);
    const { store } = protocol;
    const created = await call("POST", "/sessions", { env: "mock", split: "train", seed: 4, index: 2, config: '{"keys": 6}' });
    assert.equal(created.status, 201);
    const task = mockEnvironment.generate({ split: "train", seed: 4, index: 2, config: { keys: 6 } });
    assert.deepEqual(created.json.messages, mockEnvironment.start(task).messages);
    const id = created.json.session_id as string;
    const looked = await call("POST", `/sessions/${id}/call`, { name: "lookup", arguments: { key: task.key } });
    assert.equal(looked.status, 200);
    assert.deepEqual(JSON.parse(looked.json.content), { key: task.key, value: task.answer });
    assert.equal(looked.json.done, false);
    // Mid-episode: not ended (null, not done), scored as if the agent stopped now (no finish: outcome 0).
    const unfinished = await call("GET", `/sessions/${id}/reward`);
    assert.equal(unfinished.json.ended_by, null);
    assert.equal(unfinished.json.done, false);
    assert.equal(unfinished.json.scored_as, "no_tool_call");
    assert.equal(unfinished.json.components.outcome, 0);
    const declared = await call("GET", `/sessions/${id}/reward?ended_by=max_turns`);
    assert.equal(declared.json.ended_by, "max_turns");
    assert.equal(declared.json.scored_as, "max_turns");
    const finished = await call("POST", `/sessions/${id}/call`, { name: "finish", arguments: { answer: task.answer } });
    assert.equal(finished.json.done, true);
    const reward = await call("GET", `/sessions/${id}/reward`);
    assert.equal(reward.json.ended_by, "finished");
    assert.equal(reward.json.scored_as, "finished");
    assert.equal(reward.json.done, true);
    assert.equal(reward.json.total, 1);
    assert.deepEqual(reward.json.components, { outcome: 1, stop: 1 });
    const after = await call("POST", `/sessions/${id}/call`, { name: "lookup", arguments: { key: task.key } });
    assert.equal(after.json.error_kind, "after_finish");
    assert.equal((await call("DELETE", `/sessions/${id}`)).status, 200);
    assert.equal((await call("DELETE", `/sessions/${id}`)).json.error.code, "SESSION_UNKNOWN");
    assert.equal(store.counters.toolCalls, 3);
    assert.equal(store.counters.rewards, 3);
    assert.equal(store.size, 0);
  });

  it("ends an episode at its turn limit as evaluation does: a later call is not run and earns nothing", async () => {
    const protocol = createProtocol({ environments: ENVIRONMENTS });
    const call = request(protocol);
    const { store } = protocol;
    const address = { split: "train", seed: 4, index: 2, config: { keys: 6 } };
    const task = mockEnvironment.generate(address);
    const created = await call("POST", "/sessions", { env: "mock", ...address, max_turns: 2 });
    assert.equal(created.json.max_turns, 2);
    const id = created.json.session_id as string;
    for (const key of ["nope", task.key]) assert.equal((await call("POST", `/sessions/${id}/call`, { name: "lookup", arguments: { key } })).json.done, false);
    // The right answer, one call too late: the agent loop would have stopped before it.
    const late = await call("POST", `/sessions/${id}/call`, { name: "finish", arguments: { answer: task.answer } });
    assert.equal(late.status, 200);
    assert.equal(late.json.is_error, true);
    assert.equal(late.json.error_kind, "after_turn_limit");
    assert.equal(late.json.done, true);
    assert.match(JSON.parse(late.json.content).error, /limit of 2 turns; this call was not executed/);
    const reward = await call("GET", `/sessions/${id}/reward`);
    assert.equal(reward.json.ended_by, "max_turns");
    assert.equal(reward.json.components.outcome, 0);
    // The same calls in the agent loop, one per turn, under the same limit.
    const turns = [
      { name: "lookup", arguments: JSON.stringify({ key: "nope" }) },
      { name: "lookup", arguments: JSON.stringify({ key: task.key }) },
      { name: "finish", arguments: JSON.stringify({ answer: task.answer }) },
    ];
    let turn = 0;
    const agent = {
      id: "calls",
      act: async () => ({
        message: { role: "assistant" as const, content: "", tool_calls: [{ id: `c${turn}`, type: "function" as const, function: turns[turn++]! }] },
      }),
    };
    const trajectory = await runEpisode({ env: mockEnvironment, ...address, agent, maxTurns: 2 });
    assert.equal(trajectory.termination, "max_turns");
    assert.deepEqual(
      { total: reward.json.total, components: reward.json.components },
      { total: trajectory.reward?.total, components: trajectory.reward?.components },
    );
    // Without max_turns the session has the environment's own limit.
    const plain = await call("POST", "/sessions", { env: "mock", ...address });
    assert.equal(plain.json.max_turns, mockEnvironment.maxTurns(task));
    for (const bad of [0, -1, 2.5, "3"]) {
      const refused = await call("POST", "/sessions", { env: "mock", max_turns: bad });
      assert.equal(refused.status, 400);
      assert.equal(refused.json.error.code, "INVALID_FIELD");
      assert.match(refused.json.error.message, /max_turns/);
    }
    assert.equal(store.size, 2);
  });

  it("answers bad requests with a 4xx JSON error naming the problem", async () => {
    const protocol = createProtocol({ environments: ENVIRONMENTS, maxBodyBytes: 1000 });
    const call = request(protocol);
    const cases: [string, string, unknown, number, string][] = [
      ["POST", "/sessions", "{not json", 400, "INVALID_JSON"],
      ["POST", "/sessions", [1, 2], 400, "INVALID_BODY"],
      ["POST", "/sessions", { env: "nope" }, 404, "ENV_UNKNOWN"],
      ["POST", "/sessions", { env: 7 }, 400, "INVALID_FIELD"],
      ["POST", "/sessions", { env: "mock", split: "nope" }, 400, "SPLIT_UNKNOWN"],
      ["POST", "/sessions", { env: "mock", seed: -1 }, 400, "INVALID_FIELD"],
      ["POST", "/sessions", { env: "mock", index: 1.5 }, 400, "INVALID_FIELD"],
      ["POST", "/sessions", { env: "mock", config: { keys: "many" } }, 400, "CONFIG_INVALID"],
      ["POST", "/sessions", { env: "mock", config: "{oops" }, 400, "CONFIG_INVALID"],
      ["POST", "/sessions", { env: "mock", padding: "x".repeat(2000) }, 413, "BODY_TOO_LARGE"],
      ["POST", "/sessions", { env: "mock", sead: 1 }, 400, "UNKNOWN_FIELD"],
      ["POST", "/sessions/unknown/call", { name: "lookup" }, 404, "SESSION_UNKNOWN"],
      ["GET", "/sessions/unknown/reward", undefined, 404, "SESSION_UNKNOWN"],
      ["GET", "/no/such/route", undefined, 404, "ROUTE_UNKNOWN"],
    ];
    for (const [method, path, body, status, code] of cases) {
      const response = await call(method, path, body);
      assert.equal(response.status, status, `${method} ${path} ${JSON.stringify(body)?.slice(0, 60)}`);
      assert.equal(response.json.error.code, code);
      assert.ok(response.json.error.message.length > 10);
    }
    const id = (await call("POST", "/sessions", { env: "mock" })).json.session_id;
    assert.equal((await call("POST", `/sessions/${id}/call`, { name: 3 })).json.error.code, "INVALID_FIELD");
    assert.equal((await call("POST", `/sessions/${id}/call`, { name: "lookup", arguments: [1] })).json.error.code, "INVALID_FIELD");
    assert.equal((await call("GET", `/sessions/${id}/reward?ended_by=bogus`)).json.error.code, "INVALID_FIELD");
    const unknownTool = await call("POST", `/sessions/${id}/call`, { name: "rm_rf", arguments: {} });
    assert.equal(unknownTool.status, 200, "an unknown tool is the model's mistake: a tool error result, not an HTTP error");
    assert.equal(unknownTool.json.error_kind, "unknown_tool");
  });

  it("enforces the bearer token, max sessions and idle reaping", async () => {
    let now = 0;
    const protocol = createProtocol({ environments: ENVIRONMENTS, token: "s3cret", maxSessions: 2, idleSeconds: 10, now: () => now });
    const call = request(protocol);
    const { store } = protocol;
    assert.equal((await call("GET", "/health")).status, 200, "health stays open for liveness probes");
    const denied = await call("GET", "/envs");
    assert.equal(denied.status, 401);
    assert.equal(denied.json.error.code, "UNAUTHORIZED");
    assert.equal((await call("GET", "/envs", undefined, { authorization: "Bearer wrong!" })).status, 401);
    const auth = { authorization: "Bearer s3cret" };
    assert.equal((await call("POST", "/sessions", { env: "mock" }, auth)).status, 201);
    const second = await call("POST", "/sessions", { env: "mock" }, auth);
    assert.equal(second.status, 201);
    const full = await call("POST", "/sessions", { env: "mock" }, auth);
    assert.equal(full.status, 429);
    assert.equal(full.json.error.code, "MAX_SESSIONS");
    assert.match(full.json.error.message, /--max-sessions 2/);
    now = 5_000;
    await call("GET", `/sessions/${second.json.session_id}`, undefined, auth);
    now = 12_000;
    assert.equal(store.reapIdle(), 1, "only the session idle for more than 10 s is reaped");
    assert.equal(store.counters.sessionsReaped, 1);
    assert.equal((await call("POST", "/sessions", { env: "mock" }, auth)).status, 201);
  });
  it("checks Host, Origin, the token, the body's size and its depth before any route runs", async () => {
    const protocol = createProtocol({ environments: ENVIRONMENTS, token: "s3cret", maxBodyBytes: 4096, allowedOrigins: ["http://ok.example"] });
    const auth = { authorization: "Bearer s3cret" };
    const before = protocol.store.counters.sessionsCreated;
    const code = async (method: string, path: string, body?: unknown, headers: Record<string, string> = auth) => {
      const reply = await ask(protocol, method, path, body, headers);
      return `${reply.status} ${reply.json.error?.code ?? ""}`.trim();
    };
    assert.equal(await code("POST", "/sessions", { env: "mock" }, { ...auth, host: "evil.example:8765" }), "403 HOST_FORBIDDEN");
    assert.equal(await code("GET", "/health", undefined, { host: "evil.example" }), "403 HOST_FORBIDDEN", "before /health too");
    assert.equal(await code("POST", "/sessions", { env: "mock" }, { ...auth, origin: "http://evil.example" }), "403 ORIGIN_FORBIDDEN");
    assert.equal(await code("POST", "/sessions", { env: "mock" }, { authorization: "Bearer nope" }), "401 UNAUTHORIZED");
    assert.equal(await code("POST", "/sessions", "x".repeat(5000), {}), "401 UNAUTHORIZED", "the token before the body's size");
    assert.equal(await code("POST", "/sessions", { env: "mock", pad: "é".repeat(2100) }), "413 BODY_TOO_LARGE", "the limit counts UTF-8 bytes");
    assert.equal(await code("POST", "/sessions", `{"env": "mock", "seed": ${"[".repeat(300)}${"]".repeat(300)}}`), "400 JSON_TOO_DEEP");
    assert.equal(protocol.store.counters.sessionsCreated, before, "no refused request opened a session");
    assert.equal(await code("POST", "/sessions", { env: "mock" }, { ...auth, origin: "http://ok.example", host: "localhost:9" }), "201");
    assert.equal(await code("GET", "/health", undefined, {}), "200", "health needs no token");
    assert.equal(await code("GET", "/ws?token=s3cret", undefined, {}), "426 UPGRADE_REQUIRED", "/ws takes the token in its query");
    assert.equal(await code("GET", "/ws", undefined, {}), "401 UNAUTHORIZED");
    assert.equal(await code("GET", "/nowhere", undefined, {}), "401 UNAUTHORIZED", "an unknown route says nothing without the token");
    assert.equal(await code("GET", "/nowhere"), "404 ROUTE_UNKNOWN");
    assert.equal(await code("PUT", "/sessions"), "404 ROUTE_UNKNOWN");
    assert.equal(await code("GET", "/envs/"), "404 ROUTE_UNKNOWN");
  });
});

describe("OpenEnv protocol frames", () => {
  it("resets, lists and calls tools by step and MCP, reports state, and closes", async () => {
    const protocol = createProtocol({ environments: ENVIRONMENTS });
    const { store } = protocol;
    const connection = new OpenEnvConnection({ protocol, defaultEnv: "mock" });
    const first = async (text: unknown) => (await connection.handle(typeof text === "string" ? text : JSON.stringify(text))).frames[0] as Json;
    assert.equal((await first({ type: "step", data: { type: "list_tools" } })).data.code, "SESSION_ERROR");
    const reset = await first({ type: "reset", data: { split: "train", seed: 3, index: 1 } });
    assert.equal(reset.type, "observation");
    assert.equal(reset.data.done, false);
    assert.equal(reset.data.reward, null);
    const task = mockEnvironment.generate({ split: "train", seed: 3, index: 1, config: { keys: 5 } });
    assert.match(reset.data.observation.messages[1].content, new RegExp(task.key));
    const listed = await first({ type: "step", data: { type: "list_tools" } });
    assert.deepEqual(
      listed.data.observation.tools.map((tool: Json) => tool.name),
      ["lookup", "finish"],
    );
    const mcpList = await first({ type: "mcp", data: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
    assert.equal(mcpList.data.result.tools[0].inputSchema.type, "object");
    const mcpCall = await first({
      type: "mcp",
      data: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "lookup", arguments: { key: task.key } } },
    });
    assert.deepEqual(JSON.parse(mcpCall.data.result.content[0].text), { key: task.key, value: task.answer });
    const step = await first({ type: "step", data: { type: "call_tool", tool_name: "finish", arguments: { answer: task.answer } } });
    assert.equal(step.data.done, true);
    assert.equal(step.data.reward, 1);
    assert.equal((await first({ type: "state" })).data.step_count, 2);
    assert.equal((await first("{bad")).data.code, "INVALID_JSON");
    assert.equal((await first({ type: "dance" })).data.code, "UNKNOWN_TYPE");
    assert.equal((await first({ type: "mcp", data: { jsonrpc: "2.0", id: 3, method: "nope" } })).data.error.code, -32601);
    // A reset with a turn limit of 1: the right answer on the second call comes too late and earns nothing.
    const limited = await first({ type: "reset", data: { split: "train", seed: 3, index: 1, max_turns: 1 } });
    assert.equal(limited.data.observation.max_turns, 1);
    await first({ type: "step", data: { type: "call_tool", tool_name: "lookup", arguments: { key: task.key } } });
    const late = await first({ type: "step", data: { type: "call_tool", tool_name: "finish", arguments: { answer: task.answer } } });
    assert.equal(late.data.done, true);
    assert.equal(late.data.reward, 0);
    assert.match(JSON.stringify(late.data.observation), /limit of 1 turns; this call was not executed/);
    assert.equal(store.size, 1);
    assert.equal((await connection.handle(JSON.stringify({ type: "close" }))).close, true);
    assert.equal(store.size, 0);
  });
});

describe("tool-call answers written field by field (outcomeAnswer)", () => {
  it("writes what JSON.stringify writes, for every kind of content, and hands odd values to it", () => {
    const contents = [
      '{"key":"kalo","value":"123"}',
      "",
      'quote " backslash \\ slash /',
      "line\nbreak\ttab\u0001\u001f\u007f",
      "ключ💥",
      "\ud800 lone",
      "\u2028\u2029",
    ];
    const outcomes: CallOutcome[] = [];
    for (const content of contents) {
      outcomes.push({ content, is_error: false, done: false, calls: 1 });
      outcomes.push({ content, is_error: true, error_kind: "unknown_key", done: true, calls: 9_007_199_254_740_991 });
      outcomes.push({ content, is_error: true, error_kind: 'odd "kind"\n', done: false, calls: 0 });
    }
    const answer = (outcome: CallOutcome) => {
      const { text, bytes } = outcomeAnswer(outcome);
      assert.equal(bytes, Buffer.byteLength(text), `the byte length of ${text}`);
      return text;
    };
    for (const outcome of outcomes) assert.equal(answer(outcome), JSON.stringify(outcome), JSON.stringify(outcome));
    // Values of other types than the store's (never sent today) still come out as JSON.stringify writes them.
    const odd = [
      { content: 5, is_error: false, done: false, calls: 1 },
      { content: "x", is_error: undefined, done: false, calls: 1 },
      { content: "x", is_error: false, done: false, calls: 1.5 },
      { content: "x", is_error: false, done: false, calls: Number.NaN },
      { content: "x", is_error: false, error_kind: null, done: false, calls: 1 },
    ] as unknown as CallOutcome[];
    for (const outcome of odd) assert.equal(answer(outcome), JSON.stringify(outcome), JSON.stringify(outcome));
  });
});
