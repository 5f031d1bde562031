import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import { createProtocol } from "../src/server/protocol.ts";
import { startServer } from "../src/server/start-server.ts";
import { ask } from "../src/testing/protocol-client.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Send = (method: string, path: string, body?: unknown) => Promise<{ status: number; json: Json }>;

const task = mockEnvironment.generate({ split: "train", seed: 2, index: 7, config: { keys: 5 } });

/** The same checks through the protocol core (`answer`) and through a running server's socket reader. */
async function checkSequences(send: Send, counters: () => { toolCalls: number; repeatedCalls: number }): Promise<void> {
  const created = await send("POST", "/sessions", { env: "mock", split: "train", seed: 2, index: 7 });
  assert.equal(created.status, 201);
  const id = created.json.session_id as string;
  const call = (body: Json) => send("POST", `/sessions/${id}/call`, body);

  const first = await call({ name: "lookup", arguments: { key: task.key }, seq: 1 });
  assert.equal(first.status, 200);
  assert.deepEqual(JSON.parse(first.json.content), { key: task.key, value: task.answer });
  assert.equal(first.json.calls, 1);
  const ran = counters().toolCalls;

  // A resent call (the client lost the answer) gets the stored answer; the tool does not run again.
  const again = await call({ name: "lookup", arguments: { key: task.key }, seq: 1 });
  assert.deepEqual(again, first);
  assert.equal(counters().toolCalls, ran, "a repeated sequence number runs nothing");
  assert.equal(counters().repeatedCalls, 1);

  // Gaps and old numbers are refused with a message naming the next number.
  const gap = await call({ name: "lookup", arguments: { key: task.key }, seq: 3 });
  assert.equal(gap.status, 409);
  assert.equal(gap.json.error.code, "SEQUENCE_MISMATCH");
  assert.match(gap.json.error.message, /send seq 2 for a new call or repeat 1/);
  for (const bad of [0, -1, 1.5, "2", [2], {}]) {
    const refused = await call({ name: "lookup", arguments: { key: task.key }, seq: bad });
    assert.equal(refused.status, 400, JSON.stringify(bad));
    assert.equal(refused.json.error.code, "INVALID_FIELD");
  }
  assert.equal(counters().toolCalls, ran, "refused calls run nothing");

  // A call refused for its own content keeps its number: resending it gets the same refusal.
  const badName = await call({ name: 5, seq: 2 });
  assert.equal(badName.status, 400);
  assert.deepEqual(await call({ name: 5, seq: 2 }), badName);

  const finished = await call({ name: "finish", arguments: { answer: task.answer }, seq: 3 });
  assert.equal(finished.json.done, true);
  assert.equal(finished.json.calls, 2, "the session counted each executed call once");
  assert.deepEqual(await call({ name: "finish", arguments: { answer: task.answer }, seq: 3 }), finished);
  const reward = await send("GET", `/sessions/${id}/reward`);
  assert.equal(reward.json.total, 1);
  assert.equal(reward.json.calls, 2);

  // Calls without a number behave as before (each one runs).
  const plain = await call({ name: "lookup", arguments: { key: task.key } });
  assert.equal(plain.json.calls, 3);
}

describe("tool calls numbered by the client (seq) are run once", () => {
  it("through the protocol core", async () => {
    const protocol = createProtocol({ environments: { mock: mockEnvironment } });
    const send: Send = (method, path, body) => ask(protocol, method, path, body);
    await checkSequences(send, () => protocol.store.counters);
  });

  it("through a running server", async () => {
    const server = await startServer({ environments: { mock: mockEnvironment }, port: 0 });
    try {
      const send: Send = async (method, path, body) => {
        const response = await fetch(`${server.url}${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
        return { status: response.status, json: (await response.json()) as Json };
      };
      await checkSequences(send, () => server.store.counters);
    } finally {
      await server.close();
    }
  });
});
