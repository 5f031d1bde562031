import assert from "node:assert/strict";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import { createRequestListener } from "../src/server/node-transport.ts";
import { createProtocol, type ProtocolOptions } from "../src/server/protocol.ts";
import { startServer } from "../src/server/start-server.ts";

/**
 * Each transport answers as the protocol core does: the same sequence of valid and invalid requests goes to
 * `answer()` itself, to `toolgym serve` (the socket reader, http-connection.ts) and to node:http alone
 * (node-transport.ts, the framer the reader hands chunked and oversized bodies to). Every step states the
 * status it must get (written here, not taken from any transport); the bodies must be the core's, byte for
 * byte (session ids, random per server, numbered).
 */

interface Step {
  what: string;
  method: string;
  path: string;
  body?: string;
  /** Sent as the bearer token; null: none; default TOKEN. */
  token?: string | null;
  /** The body sent in pieces without a content-length (HTTP transports). */
  chunked?: boolean;
  status: number;
}

interface Reply {
  status: number;
  text: string;
  contentType: string | undefined;
}

/** Session ids a transport made, in order; `{id:N}` in a step's path names the N-th. */
type Made = string[];

interface Transport {
  name: string;
  send(step: Step, made: Made): Promise<Reply>;
  stats(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

const TOKEN = "s3cret";
const LIMIT = 2048;

function authorization(step: Step): string | undefined {
  const token = step.token === undefined ? TOKEN : step.token;
  if (token === null) return undefined;
  return token.startsWith("Bearer") ? token : `Bearer ${token}`;
}

/** The reply with the session ids it names numbered, recording a newly created one. */
function numbered(status: number, raw: string, contentType: string | undefined, made: Made): Reply {
  const created = /^\{"session_id":"([^"]+)"/.exec(raw);
  if (created && status === 201) made.push(created[1] as string);
  let text = raw;
  made.forEach((id, index) => (text = text.replaceAll(id, `{id:${index}}`)));
  return { status, text, contentType };
}

const target = (step: Step, made: Made) => step.path.replace(/\{id:(\d)\}/, (_, index: string) => made[Number(index)] ?? "missing");

function coreTransport(options: ProtocolOptions): Transport {
  const protocol = createProtocol(options);
  return {
    name: "answer()",
    async send(step, made) {
      const answer = await protocol.answer({ method: step.method, target: target(step, made), authorization: authorization(step), body: step.body });
      assert.equal(answer.bytes, Buffer.byteLength(answer.text), `${step.what}: the answer's byte length`);
      return numbered(answer.status, answer.text, "application/json", made);
    },
    stats: async () => JSON.parse((await protocol.answer({ method: "GET", target: "/stats", authorization: `Bearer ${TOKEN}` })).text),
    close: async () => undefined,
  };
}

function httpSend(port: number, step: Step, made: Made): Promise<Reply> {
  return new Promise((done, fail) => {
    const headers: Record<string, string | number> = { "content-type": "application/json" };
    const token = authorization(step);
    if (token !== undefined) headers.authorization = token;
    if (step.body !== undefined && !step.chunked) headers["content-length"] = Buffer.byteLength(step.body);
    // A connection per request: a request the socket reader cannot frame hands its connection to node:http for good.
    const outgoing = request({ host: "127.0.0.1", port, method: step.method, path: target(step, made), headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => done(numbered(response.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"), response.headers["content-type"], made)));
    });
    outgoing.setTimeout(30_000, () => outgoing.destroy(new Error(`${step.what}: no answer within 30 s`)));
    outgoing.on("error", fail);
    if (step.chunked && step.body !== undefined) {
      const bytes = Buffer.from(step.body);
      for (let offset = 0; offset < bytes.length; offset += 700) outgoing.write(bytes.subarray(offset, offset + 700));
      outgoing.end();
    } else outgoing.end(step.body);
  });
}

function httpTransport(name: string, port: number, close: () => Promise<void>): Transport {
  return {
    name,
    send: (step, made) => httpSend(port, step, made),
    stats: async () => JSON.parse((await httpSend(port, { what: "stats", method: "GET", path: "/stats", status: 200 }, [])).text),
    close,
  };
}

async function socketTransport(options: ProtocolOptions): Promise<Transport> {
  const server = await startServer({ ...options, port: 0 });
  return httpTransport("toolgym serve (socket reader)", server.port, () => server.close());
}

async function nodeTransport(options: ProtocolOptions): Promise<Transport> {
  const server: Server = createServer(createRequestListener(createProtocol(options)));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const close = () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return httpTransport("node:http", (server.address() as AddressInfo).port, close);
}

async function replay(options: ProtocolOptions, steps: Step[]): Promise<Record<string, unknown>[]> {
  const transports = [coreTransport(options), await socketTransport(options), await nodeTransport(options)];
  try {
    const made: Made[] = transports.map(() => []);
    for (const step of steps) {
      const replies: Reply[] = [];
      for (const [index, transport] of transports.entries()) replies.push(await transport.send(step, made[index] as Made));
      const core = replies[0] as Reply;
      assert.equal(core.status, step.status, `${step.what}: ${core.text}`);
      if (step.status >= 400) assert.match(core.text, /"message":"[^"]{10,}/, `${step.what}: a message naming the problem`);
      for (const [index, reply] of replies.entries()) {
        assert.match(reply.contentType ?? "", /^application\/json/, `${step.what} (${transports[index]?.name})`);
        assert.deepEqual(reply, core, `${step.what}: ${transports[index]?.name} answers as the core`);
      }
    }
    return await Promise.all(transports.map((transport) => transport.stats()));
  } finally {
    for (const transport of transports) await transport.close();
  }
}

const task = mockEnvironment.generate({ split: "train", seed: 3, index: 1, config: { keys: 5 } });
const call = (name: unknown, args?: unknown, extra: Record<string, unknown> = {}) => JSON.stringify({ name, arguments: args, ...extra });
const CALL = "/sessions/{id:0}/call";
const post = (what: string, path: string, body: string | undefined, status: number, extra: Partial<Step> = {}): Step => ({
  what,
  method: "POST",
  path,
  body,
  status,
  ...extra,
});
const create = (fields: Record<string, unknown>) => JSON.stringify(fields);

const CALL_STEPS: Step[] = [
  post("the session", "/sessions", create({ env: "mock", split: "train", seed: 3, index: 1 }), 201),
  post("a valid lookup", CALL, call("lookup", { key: task.key }), 200),
  post("a lookup of a key that is not there", CALL, call("lookup", { key: "zzzz" }), 200),
  post("an unknown tool", CALL, call("rm", {}), 200),
  post("an undeclared argument", CALL, call("lookup", { key: task.key, pad: 1 }), 200),
  post("no arguments field", CALL, JSON.stringify({ name: "lookup" }), 200),
  post("broken JSON", CALL, "{", 400),
  post("broken JSON, other text", CALL, '{"name": "lookup", "arguments": {"key": 1,}}', 400),
  post("a JSON array", CALL, "[1, 2]", 400),
  post("JSON null", CALL, "null", 400),
  post("a JSON string", CALL, '"lookup"', 400),
  post("an empty body", CALL, "", 400),
  post("only whitespace", CALL, " \n", 400),
  post("a number as the name", CALL, call(5, {}), 400),
  post("arguments as an array", CALL, call("lookup", [1]), 400),
  post("arguments as a string", CALL, call("lookup", "kalo"), 400),
  post("a byte-order mark before the JSON", CALL, `\ufeff${call("lookup", { key: task.key })}`, 200),
  post("a chunked body", CALL, call("lookup", { key: task.key, pad: "x".repeat(1500) }), 200, { chunked: true }),
  post("non-ASCII arguments", CALL, call("lookup", { key: "ключ💥" }), 200),
  post("a body over the limit, declared", CALL, call("lookup", { key: "y".repeat(5000) }), 413),
  post("a body over the limit, chunked", CALL, call("lookup", { key: "y".repeat(5000) }), 413, { chunked: true }),
  post("no token", CALL, call("lookup", { key: task.key }), 401, { token: null }),
  post("a wrong token", CALL, "{", 401, { token: "s3creT" }),
  post("a token without Bearer", CALL, call("lookup", {}), 401, { token: "Bearer" }),
  post("an unknown session", "/sessions/no-such-session/call", call("lookup", {}), 404),
  post("a percent-escaped session id", "/sessions/no%20such/call", call("lookup", {}), 404),
  post("a query string", `${CALL}?verbose=1`, call("lookup", { key: task.key }), 200),
  { what: "a GET", method: "GET", path: CALL, status: 404 },
  post("seq that is not a number", CALL, call("lookup", { key: task.key }, { seq: "1" }), 400),
  post("seq 0", CALL, call("lookup", { key: task.key }, { seq: 0 }), 400),
  post("seq 1, the first numbered call", CALL, call("lookup", { key: task.key }, { seq: 1 }), 200),
  post("seq 1 again (a retry)", CALL, call("lookup", { key: task.key }, { seq: 1 }), 200),
  post("seq 3, skipping 2", CALL, call("lookup", { key: task.key }, { seq: 3 }), 409),
  post("finish", CALL, call("finish", { answer: task.answer }), 200),
  post("a call after finish", CALL, call("lookup", { key: task.key }), 200),
  { what: "the reward", method: "GET", path: "/sessions/{id:0}/reward", status: 200 },
  { what: "the reward as it ended by the turn limit", method: "GET", path: "/sessions/{id:0}/reward?ended_by=max_turns", status: 200 },
  post("the reward by POST", "/sessions/{id:0}/reward", JSON.stringify({ ended_by: "finished" }), 200),
  { what: "the session", method: "GET", path: "/sessions/{id:0}", status: 200 },
  { what: "an unknown route", method: "GET", path: "/sessions/{id:0}/nothing", status: 404 },
  { what: "health without a token", method: "GET", path: "/health", token: null, status: 200 },
  { what: "the environments", method: "GET", path: "/envs/mock", status: 200 },
];

const remove = (what: string, path: string, status: number, extra: Partial<Step> = {}): Step => ({ what, method: "DELETE", path, status, ...extra });

const SESSION_STEPS: Step[] = [
  post("a valid create", "/sessions", create({ env: "mock" }), 201),
  post("a create with every field", "/sessions", create({ env: "mock", split: "train", seed: 3, index: 1, config: { keys: 5 }, max_turns: 3 }), 201),
  post("a config as JSON text", "/sessions", create({ env: "mock", split: "train", seed: 4, config: '{"keys": 3}' }), 201),
  post("broken JSON", "/sessions", "{", 400),
  post("a JSON array", "/sessions", "[1]", 400),
  post("an empty body", "/sessions", "", 400),
  post("env as a number", "/sessions", create({ env: 5 }), 400),
  post("an unknown env", "/sessions", create({ env: "nope" }), 404),
  post("an unknown field", "/sessions", create({ env: "mock", temperature: 1, tools: [] }), 400),
  post("an unknown split", "/sessions", create({ env: "mock", split: "dev" }), 400),
  post("a negative seed", "/sessions", create({ env: "mock", seed: -1 }), 400),
  post("a zero turn limit", "/sessions", create({ env: "mock", max_turns: 0 }), 400),
  post("a config that breaks the schema", "/sessions", create({ env: "mock", config: { keys: "many" } }), 400),
  post("a byte-order mark before the JSON", "/sessions", `\ufeff${create({ env: "mock", seed: 7 })}`, 201),
  post("non-ASCII in an unknown field", "/sessions", create({ env: "mock", "ключ💥": 1 }), 400),
  post("no token", "/sessions", create({ env: "mock" }), 401, { token: null }),
  post("a wrong token", "/sessions", "{", 401, { token: "s3creT" }),
  post("a body over the limit", "/sessions", create({ env: "mock", pad: "y".repeat(5000) }), 413),
  post("a chunked body", "/sessions", create({ env: "mock", seed: 9 }), 201, { chunked: true }),
  post("a query string, one session too many", "/sessions?x=1", create({ env: "mock" }), 429),
  remove("closing the first session", "/sessions/{id:0}", 200),
  remove("closing it again", "/sessions/{id:0}", 404),
  remove("an unknown session", "/sessions/no-such-session", 404),
  remove("a worker-style id", "/sessions/w1-abc", 404),
  remove("a percent-escaped id", "/sessions/no%20such", 404),
  remove("no token", "/sessions/{id:1}", 401, { token: null }),
  remove("a body sent along", "/sessions/{id:1}", 200, { body: '{"x":1}' }),
  remove("a query string", "/sessions/{id:2}?now=1", 200),
  post("a create once there is room", "/sessions", create({ env: "mock", seed: 11 }), 201),
];

describe("every transport answers as the protocol core", () => {
  const options: ProtocolOptions = { environments: { mock: mockEnvironment }, token: TOKEN, maxBodyBytes: LIMIT, maxSessions: 5 };

  it("tool calls, rewards and reads: the same status and body for every request in the sequence", async () => {
    const stats = await replay(options, CALL_STEPS);
    // 12 requests reached a tool (counted by hand from the steps); the retry is answered from the stored reply.
    for (const counted of stats) {
      assert.equal(counted.toolCalls, 12);
      assert.equal(counted.repeatedCalls, 1);
      assert.equal(counted.rewards, 3);
    }
  });

  it("session create and close: the same status and body for every request in the sequence", async () => {
    const stats = await replay(options, SESSION_STEPS);
    for (const counted of stats) {
      assert.equal(counted.sessionsCreated, 6);
      assert.equal(counted.sessionsClosed, 3);
      assert.equal(counted.open_sessions, 3);
    }
  });
});
