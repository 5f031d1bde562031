import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { CUSTOMER_LEFT, CUSTOMER_TOOL } from "../src/envs/tau2/customer-tool.ts";
import { findTask, getDomain } from "../src/envs/tau2/domains.ts";
import { openingRequest } from "../src/envs/tau2/scripted-customer.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Mock task 0 of the base split: its gold calls, then the closing message the scripted customer stops at. */
function goldCalls(): [string, Record<string, unknown>][] {
  const task = findTask(getDomain("mock"), getDomain("mock").splits().base?.[0] as string);
  return [
    ...(task.evaluation_criteria?.actions ?? []).map((action) => [action.name, action.arguments] as [string, Record<string, unknown>]),
    [CUSTOMER_TOOL, { content: "Your task has been created. Is there anything else I can help you with?" }],
  ];
}

describe("tau2 sessions of toolgym serve hold the whole conversation (customer as a tool, scripted user)", () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ environments: ENVIRONMENTS, port: 0 });
  });
  after(async () => {
    await server.close();
  });

  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: response.status, json: (await response.json()) as Json };
  };
  const open = async () => {
    const created = await post("/sessions", { env: "tau2_mock", split: "base", index: 0, config: { customer: "tool" } });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    return created.json;
  };
  const reward = async (id: string) => (await (await fetch(`${server.url}/sessions/${id}/reward`)).json()) as Json;

  it("reset returns the agent's greeting and the customer's first message, and offers send_message_to_user", async () => {
    const created = await open();
    const task = findTask(getDomain("mock"), getDomain("mock").splits().base?.[0] as string);
    assert.deepEqual(
      created.messages.map((message: Json) => message.role),
      ["system", "assistant", "user"],
    );
    assert.equal(created.messages[2].content, openingRequest(task));
    assert.ok(created.tools.some((tool: Json) => tool.function.name === CUSTOMER_TOOL));
    const listed = (await (await fetch(`${server.url}/envs/tau2_mock`)).json()) as Json;
    assert.ok(
      listed.tools.some((tool: Json) => tool.function.name === CUSTOMER_TOOL),
      "the catalog lists the trainer's tools",
    );
  });

  it("the gold conversation scores 1.0; the customer's reply is the tool's result and says when the conversation ended", async () => {
    const { session_id: id } = await open();
    let last: Json = {};
    for (const [name, args] of goldCalls()) {
      const answer = await post(`/sessions/${id}/call`, { name, arguments: args });
      assert.equal(answer.status, 200, JSON.stringify(answer.json));
      assert.equal(answer.json.is_error, false, JSON.stringify(answer.json));
      last = answer.json;
    }
    assert.equal(last.done, true);
    assert.match(last.content, /###STOP###/);
    assert.ok(last.content.endsWith(CUSTOMER_LEFT));
    const scored = await reward(id);
    assert.equal(scored.total, 1, JSON.stringify(scored.components));
    assert.equal(scored.ended_by, "finished");
    assert.equal(scored.diagnostics.tau2_termination, "user_stop");
    const after = await post(`/sessions/${id}/call`, { name: CUSTOMER_TOOL, arguments: { content: "Hello?" } });
    assert.equal(after.json.is_error, true, "nothing runs once the customer has left");
  });

  it("a conversation that does nothing scores 0 (tau2's evaluation, not a missing conversation); the customer says so before it gives up", async () => {
    const { session_id: id } = await open();
    const close = () =>
      post(`/sessions/${id}/call`, { name: CUSTOMER_TOOL, arguments: { content: "Thanks for calling. Is there anything else I can help you with?" } });
    for (let attempt = 0; attempt < 2; attempt++) {
      const answer = await close();
      assert.equal(answer.json.done, false, "a closing line does not end the conversation while the customer's problem stands");
      assert.match(answer.json.content, /does not solve my problem/);
      assert.doesNotMatch(answer.json.content, /###/);
    }
    const answer = await close();
    assert.equal(answer.json.done, true);
    assert.match(answer.json.content, /###STOP###/);
    const scored = await reward(id);
    assert.equal(scored.total, 0);
    assert.equal(scored.diagnostics.tau2_termination, "user_stop");
    assert.equal(scored.components.DB, 0);
  });

  it("a reward asked mid-episode is provisional and never kept: the gold conversation still scores 1.0 afterwards", async () => {
    const { session_id: id } = await open();
    const early = await reward(id);
    assert.equal(early.provisional, true);
    assert.equal(early.done, false);
    assert.equal(early.total, 0);
    assert.equal(early.diagnostics.provisional, 1);
    let last: Json = {};
    for (const [name, args] of goldCalls()) {
      last = (await post(`/sessions/${id}/call`, { name, arguments: args })).json;
      if (!last.done) assert.equal((await reward(id)).provisional, true);
    }
    assert.equal(last.done, true);
    const scored = await reward(id);
    assert.equal(scored.total, 1, JSON.stringify(scored.components));
    assert.equal(scored.provisional, false);
    assert.equal(scored.diagnostics.provisional, undefined);
    assert.equal(scored.diagnostics.tau2_termination, "user_stop");
  });

  it("a tau2 session under tau2's leaderboard protocol is refused at creation with one clear error, never scored", async () => {
    const before = ((await (await fetch(`${server.url}/stats`)).json()) as Json).sessionsCreated;
    const refused = await post("/sessions", { env: "tau2_mock", split: "base", index: 0 });
    assert.equal(refused.status, 422);
    assert.equal(refused.json.error.code, "PROTOCOL_NOT_SERVABLE");
    assert.match(refused.json.error.message, /user simulator/);
    assert.match(refused.json.error.message, /"customer": "tool"/);
    assert.ok(!refused.json.error.message.includes("\n"));
    assert.equal(((await (await fetch(`${server.url}/stats`)).json()) as Json).sessionsCreated, before);
  });

  it("the same over OpenEnv's WebSocket: reset opens the conversation, a step reaches the customer", async () => {
    const socket = new WebSocket(`${server.url.replace("http", "ws")}/ws`);
    const frames: Json[] = [];
    const next = () =>
      new Promise<Json>((done) => {
        const poll = () => (frames.length > 0 ? done(frames.shift() as Json) : setTimeout(poll, 5));
        poll();
      });
    socket.on("message", (data) => frames.push(JSON.parse(String(data)) as Json));
    await new Promise((done) => socket.once("open", done));
    socket.send(JSON.stringify({ type: "reset", data: { env: "tau2_mock", split: "base", index: 0, config: { customer: "tool" } } }));
    const reset = await next();
    assert.equal(reset.data.observation.messages.at(-1).role, "user");
    let step: Json = {};
    for (let attempt = 0; attempt < 3; attempt++) {
      socket.send(JSON.stringify({ type: "step", data: { type: "call_tool", tool_name: CUSTOMER_TOOL, arguments: { content: "Is there anything else?" } } }));
      step = await next();
      if (attempt < 2) assert.equal(step.data.reward, null, "no reward while the conversation goes on");
    }
    assert.match(step.data.observation.result, /###STOP###/);
    assert.equal(step.data.done, true);
    assert.equal(step.data.reward, 0);
    socket.close();
  });
});
