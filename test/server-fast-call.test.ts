import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import { outcomeAnswer } from "../src/server/fast-call.ts";
import type { CallOutcome } from "../src/server/session-store.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Json;
}

/** A raw HTTP request, so the test controls framing: `chunked` sends the body without a content-length. */
function send(
  server: RunningServer,
  method: string,
  path: string,
  options: { body?: string | Buffer; token?: string; chunked?: boolean } = {},
): Promise<Reply> {
  return new Promise((done, fail) => {
    const headers: Record<string, string | number> = { "content-type": "application/json" };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined && !options.chunked) headers["content-length"] = Buffer.byteLength(options.body);
    const outgoing = request({ host: "127.0.0.1", port: server.port, method, path, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => done({ status: response.statusCode ?? 0, headers: response.headers, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
    });
    outgoing.on("error", fail);
    if (options.chunked && options.body !== undefined) {
      // Several writes without a content-length: node sends them chunked.
      const text = Buffer.from(options.body);
      for (let offset = 0; offset < text.length; offset += 700) outgoing.write(text.subarray(offset, offset + 700));
      outgoing.end();
    } else outgoing.end(options.body);
  });
}

describe("fast tool-call path (POST /sessions/:id/call on node:http)", () => {
  const token = "s3cret";
  let server: RunningServer;
  before(async () => {
    server = await startServer({ environments: { mock: mockEnvironment }, port: 0, token, maxBodyBytes: 2048 });
  });
  after(async () => {
    await server.close();
  });

  async function createSession(): Promise<{ id: string; key: string; answer: string }> {
    const created = await send(server, "POST", "/sessions", { body: JSON.stringify({ env: "mock", split: "train", seed: 3, index: 1 }), token });
    assert.equal(created.status, 201);
    const task = mockEnvironment.generate({ split: "train", seed: 3, index: 1, config: { keys: 5 } });
    return { id: created.json.session_id, key: task.key, answer: task.answer };
  }

  it("answers a tool call exactly like the Hono route, and counts it", async () => {
    const { id, key, answer } = await createSession();
    const before = server.store.counters.toolCalls;
    const reply = await send(server, "POST", `/sessions/${id}/call`, { body: JSON.stringify({ name: "lookup", arguments: { key } }), token });
    assert.equal(reply.status, 200);
    assert.equal(reply.headers["content-type"], "application/json");
    assert.deepEqual(reply.json, { content: JSON.stringify({ key, value: answer }), is_error: false, done: false, calls: 1 });
    const viaHono = await server.app.request(`/sessions/${id}/call`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: "lookup", arguments: { key } }),
    });
    assert.deepEqual(await viaHono.json(), { ...reply.json, calls: 2 });
    const chunked = await send(server, "POST", `/sessions/${id}/call`, {
      body: JSON.stringify({ name: "lookup", arguments: { key, pad: "x".repeat(1500) } }),
      token,
      chunked: true,
    });
    assert.equal(chunked.status, 200);
    assert.equal(chunked.json.calls, 3);
    const withMark = await send(server, "POST", `/sessions/${id}/call`, { body: `\ufeff${JSON.stringify({ name: "lookup", arguments: { key } })}`, token });
    assert.equal(withMark.status, 200, "a UTF-8 byte-order mark is dropped, as Request.text() does");
    assert.equal(server.store.counters.toolCalls - before, 4);
  });

  it("checks the token before anything else", async () => {
    const { id, key } = await createSession();
    const missing = await send(server, "POST", `/sessions/${id}/call`, { body: JSON.stringify({ name: "lookup", arguments: { key } }) });
    assert.equal(missing.status, 401);
    assert.equal(missing.json.error.code, "UNAUTHORIZED");
    const wrong = await send(server, "POST", `/sessions/${id}/call`, { body: "{", token: "s3creT" });
    assert.equal(wrong.status, 401);
  });

  it("refuses bodies over the limit with 413, declared or chunked", async () => {
    const { id } = await createSession();
    const huge = JSON.stringify({ name: "lookup", arguments: { key: "y".repeat(5000) } });
    const declared = await send(server, "POST", `/sessions/${id}/call`, { body: huge, token });
    assert.equal(declared.status, 413);
    assert.equal(declared.json.error.code, "BODY_TOO_LARGE");
    const chunked = await send(server, "POST", `/sessions/${id}/call`, { body: huge, token, chunked: true });
    assert.equal(chunked.status, 413);
    assert.equal(chunked.json.error.code, "BODY_TOO_LARGE");
  });

  it("answers bad input with a 4xx JSON error naming the problem", async () => {
    const { id } = await createSession();
    const cases: [string, string, number, string][] = [
      [`/sessions/${id}/call`, "{", 400, "INVALID_JSON"],
      [`/sessions/${id}/call`, "[1, 2]", 400, "INVALID_BODY"],
      [`/sessions/${id}/call`, "", 400, "INVALID_FIELD"],
      [`/sessions/${id}/call`, JSON.stringify({ name: "lookup", arguments: [1] }), 400, "INVALID_FIELD"],
      ["/sessions/no-such-session/call", JSON.stringify({ name: "lookup", arguments: {} }), 404, "SESSION_UNKNOWN"],
      ["/sessions/no%20such/call", JSON.stringify({ name: "lookup", arguments: {} }), 404, "SESSION_UNKNOWN"],
    ];
    for (const [path, body, status, code] of cases) {
      const reply = await send(server, "POST", path, { body, token });
      assert.equal(reply.status, status, `${path} ${body}`);
      assert.equal(reply.json.error.code, code, `${path} ${body}`);
      assert.match(reply.json.error.message, /\w{5,}/);
    }
    const unknownTool = await send(server, "POST", `/sessions/${id}/call`, { body: JSON.stringify({ name: "rm", arguments: {} }), token });
    assert.equal(unknownTool.status, 200);
    assert.equal(unknownTool.json.is_error, true);
    assert.equal(unknownTool.json.error_kind, "unknown_tool");
    const wrongMethod = await send(server, "GET", `/sessions/${id}/call`, { token });
    assert.equal(wrongMethod.status, 404, "other methods still go to the Hono app");
    assert.equal(wrongMethod.json.error.code, "ROUTE_UNKNOWN");
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
