import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { after, before, describe, it } from "node:test";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import type { ServerAppOptions } from "../src/server/app.ts";
import { startServerPair, type ServerPair } from "./support/server-pair.ts";

/**
 * Session create (`POST /sessions`) and close (`DELETE /sessions/:id`) on the socket reader's own path
 * (src/server/fast-session.ts) against the path it stands in for: the same app served by Hono's Node adapter
 * alone. Both servers get the same sequence of valid and invalid requests over real sockets and must answer
 * with the same status, content type, content length, connection header and body, byte for byte (session
 * ids, random per server, numbered). Each step also states whether Hono answers it on `toolgym serve`: the
 * Hono adapter writes its first header as `Content-Type`, the hand-written paths (the socket reader, and
 * the node:http-side refusal of an oversized body in fast-call.ts) as `content-type`, so the raw header
 * names show which path answered.
 */

interface Step {
  what: string;
  method: "POST" | "DELETE";
  path: string;
  body?: string;
  token?: string | null;
  chunked?: boolean;
  /**
   * Sent on a connection of its own: a request the socket reader cannot frame (chunked, over the limit)
   * makes it hand the connection to node:http for good, and later requests on it would not reach it.
   */
  alone?: boolean;
  /** The status both paths must give (stated here, not taken from either path). */
  status: number;
  /** Whether Hono answers it on `toolgym serve` (else a hand-written path does). */
  hono: boolean;
}

interface Reply {
  status: number;
  contentType: string | undefined;
  contentLength: string | undefined;
  connection: string | undefined;
  text: string;
}

const TOKEN = "s3cret";
const LIMIT = 2048;
const MAX_SESSIONS = 5;

/** Session ids each server made, in order; `{id:N}` in a step's path names the N-th. */
type Made = string[];

function send(port: number, step: Step, made: Made, agent: Agent | false): Promise<{ reply: Reply; hono: boolean }> {
  return new Promise((done, fail) => {
    const headers: Record<string, string | number> = { "content-type": "application/json" };
    const token = step.token === undefined ? TOKEN : step.token;
    if (token !== null) headers.authorization = token.startsWith("Bearer") ? token : `Bearer ${token}`;
    if (step.body !== undefined && !step.chunked) headers["content-length"] = Buffer.byteLength(step.body);
    const path = step.path.replace(/\{id:(\d)\}/, (_, index: string) => made[Number(index)] ?? "missing");
    const outgoing = request({ host: "127.0.0.1", port, method: step.method, path, headers, agent: step.alone ? false : agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        let text = Buffer.concat(chunks).toString("utf8");
        const created = /^\{"session_id":"([^"]+)"/.exec(text);
        if (created && response.statusCode === 201) made.push(created[1] as string);
        made.forEach((id, index) => (text = text.replaceAll(id, `{id:${index}}`)));
        const reply = {
          status: response.statusCode ?? 0,
          contentType: response.headers["content-type"],
          contentLength: response.headers["content-length"],
          connection: response.headers.connection,
          text,
        };
        done({ reply, hono: response.rawHeaders[0] === "Content-Type" });
      });
    });
    outgoing.on("error", fail);
    if (step.chunked && step.body !== undefined) {
      const bytes = Buffer.from(step.body);
      for (let offset = 0; offset < bytes.length; offset += 10) outgoing.write(bytes.subarray(offset, offset + 10));
      outgoing.end();
    } else outgoing.end(step.body);
  });
}

const create = (fields: Record<string, unknown>) => JSON.stringify(fields);
const post = (what: string, body: string | undefined, status: number, extra: Partial<Step> = {}): Step => ({
  what,
  method: "POST",
  path: "/sessions",
  body,
  status,
  hono: false,
  ...extra,
});
const remove = (what: string, path: string, status: number, extra: Partial<Step> = {}): Step => ({
  what,
  method: "DELETE",
  path,
  status,
  hono: false,
  ...extra,
});

const STEPS: Step[] = [
  post("a valid create", create({ env: "mock" }), 201),
  post("a create with every field", create({ env: "mock", split: "train", seed: 3, index: 1, config: { keys: 5 }, max_turns: 3 }), 201),
  post("a config as JSON text", create({ env: "mock", split: "train", seed: 4, config: '{"keys": 3}' }), 201),
  post("broken JSON", "{", 400),
  post("broken JSON, other text", '{"env": "mock",}', 400),
  post("a JSON array", "[1]", 400),
  post("JSON null", "null", 400),
  post("an empty body", "", 400),
  post("only whitespace", " \n", 400),
  post("no env", create({ seed: 1 }), 400),
  post("env as a number", create({ env: 5 }), 400),
  post("an unknown env", create({ env: "nope" }), 404),
  post("an unknown field", create({ env: "mock", temperature: 1, tools: [] }), 400),
  post("an unknown split", create({ env: "mock", split: "dev" }), 400),
  post("a negative seed", create({ env: "mock", seed: -1 }), 400),
  post("a zero turn limit", create({ env: "mock", max_turns: 0 }), 400),
  post("a turn limit as text", create({ env: "mock", max_turns: "3" }), 400),
  post("a fractional index", create({ env: "mock", index: 1.5 }), 400),
  post("a config that breaks the schema", create({ env: "mock", config: { keys: "many" } }), 400),
  post("a config that is broken JSON text", create({ env: "mock", config: "{" }), 400),
  post("a byte-order mark before the JSON", `\ufeff${create({ env: "mock", seed: 7 })}`, 201),
  post("non-ASCII in an unknown field", create({ env: "mock", "ключ💥": 1 }), 400),
  post("no token", create({ env: "mock" }), 401, { token: null }),
  post("a wrong token", "{", 401, { token: "s3creT" }),
  post("a token without Bearer", create({ env: "mock" }), 401, { token: "Bearer" }),
  post("a body over the limit", create({ env: "mock", pad: "y".repeat(5000) }), 413, { alone: true }),
  post("a chunked body", create({ env: "mock", seed: 9 }), 201, { chunked: true, alone: true, hono: true }),
  post("a query string", create({ env: "mock" }), 429, { path: "/sessions?x=1", hono: true }),
  post("one session too many", create({ env: "mock" }), 429),
  remove("closing the first session", "/sessions/{id:0}", 200),
  remove("closing it again", "/sessions/{id:0}", 404),
  remove("an unknown session", "/sessions/no-such-session", 404),
  remove("a worker-style id", "/sessions/w1-abc", 404),
  remove("a percent-escaped id", "/sessions/no%20such", 404, { hono: true }),
  remove("no token", "/sessions/{id:1}", 401, { token: null }),
  remove("a wrong token", "/sessions/{id:1}", 401, { token: "nope" }),
  remove("a body sent along", "/sessions/{id:1}", 200, { body: '{"x":1}' }),
  remove("a query string", "/sessions/{id:2}?now=1", 200, { hono: true }),
  post("a create once there is room", create({ env: "mock", seed: 11 }), 201),
  remove("closing the last one", "/sessions/{id:5}", 200),
];

describe("session create and close: the socket reader answers exactly as the Hono path", () => {
  const options: ServerAppOptions = { environments: { mock: mockEnvironment }, token: TOKEN, maxBodyBytes: LIMIT, maxSessions: MAX_SESSIONS };
  let pair: ServerPair;
  before(async () => {
    pair = await startServerPair(options);
  });
  after(() => pair.close());

  const stats = async (port: number) => {
    const reply = await new Promise<string>((done, fail) => {
      const outgoing = request({ host: "127.0.0.1", port, path: "/stats", headers: { authorization: `Bearer ${TOKEN}` }, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => done(Buffer.concat(chunks).toString("utf8")));
      });
      outgoing.on("error", fail);
      outgoing.end();
    });
    return JSON.parse(reply) as Record<string, unknown>;
  };

  for (const keepAlive of [false, true]) {
    it(`gives the same answer to every request in the sequence (${keepAlive ? "one kept-alive connection" : "a connection per request"})`, async () => {
      const fastAgent = keepAlive ? new Agent({ keepAlive: true, maxSockets: 1 }) : false;
      const simpleAgent = keepAlive ? new Agent({ keepAlive: true, maxSockets: 1 }) : false;
      const fastMade: Made = [];
      const simpleMade: Made = [];
      try {
        for (const step of STEPS) {
          const viaFast = await send(pair.fastPort, step, fastMade, fastAgent);
          const viaSimple = await send(pair.simplePort, step, simpleMade, simpleAgent);
          assert.equal(viaFast.reply.status, step.status, `${step.what}: ${viaFast.reply.text}`);
          assert.deepEqual(viaFast.reply, viaSimple.reply, step.what);
          assert.equal(viaFast.hono, step.hono, `${step.what}: answered by ${step.hono ? "Hono" : "a hand-written path"}`);
          assert.equal(viaSimple.hono, true, `${step.what}: the plain server answers through Hono`);
          assert.match(viaFast.reply.contentType ?? "", /^application\/json/, step.what);
          if (step.status >= 400) assert.match(viaFast.reply.text, /"message":"[^"]{10,}/, `${step.what}: a message naming the problem`);
        }
        assert.equal(fastMade.length, 6, "six sessions were created on each server");
        // Every session the steps left open is closed, so the second run starts from an empty server.
        for (const id of fastMade.slice(3, 5)) await send(pair.fastPort, remove("cleanup", `/sessions/${id}`, 200), [], fastAgent);
        for (const id of simpleMade.slice(3, 5)) await send(pair.simplePort, remove("cleanup", `/sessions/${id}`, 200), [], simpleAgent);
        const fastStats = await stats(pair.fastPort);
        assert.deepEqual(fastStats, await stats(pair.simplePort), "the same sessions counted as created and closed");
        assert.equal(fastStats.open_sessions, 0);
      } finally {
        if (fastAgent) fastAgent.destroy();
        if (simpleAgent) simpleAgent.destroy();
      }
    });
  }
});
