import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import type { ServerAppOptions } from "../src/server/app.ts";
import { startServerPair, type ServerPair } from "./support/server-pair.ts";

/**
 * The hand-written tool-call path (src/server/fast-call.ts, kept because bench/server-call-path.ts shows it
 * takes several times less server CPU per call) against the simple path it stands in for: the same app
 * served by Hono's Node adapter alone. Both get the same sequence of valid and invalid requests over real
 * sockets and must answer with the same status, headers that matter and body, byte for byte.
 */

interface Step {
  what: string;
  path: string;
  body?: string | Buffer;
  token?: string | null;
  chunked?: boolean;
  method?: string;
  /** The status both paths must give (stated here, not taken from either path). */
  status: number;
}

interface Reply {
  status: number;
  contentType: string | undefined;
  connection: string | undefined;
  text: string;
}

const TOKEN = "s3cret";
const LIMIT = 2048;

function send(port: number, step: Step, sessionId: string): Promise<Reply> {
  return new Promise((done, fail) => {
    const headers: Record<string, string | number> = { "content-type": "application/json" };
    const token = step.token === undefined ? TOKEN : step.token;
    if (token !== null) headers.authorization = token.startsWith("Bearer") ? token : `Bearer ${token}`;
    if (step.body !== undefined && !step.chunked) headers["content-length"] = Buffer.byteLength(step.body);
    const path = step.path.replace("{id}", sessionId);
    const outgoing = request({ host: "127.0.0.1", port, method: step.method ?? "POST", path, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        done({
          status: response.statusCode ?? 0,
          contentType: response.headers["content-type"],
          connection: response.headers.connection,
          // Each server made its own session id; a message that names it is compared with the id blanked.
          text: Buffer.concat(chunks)
            .toString("utf8")
            .replaceAll(sessionId || "\u0000", "{id}"),
        }),
      );
    });
    outgoing.on("error", fail);
    if (step.chunked && step.body !== undefined) {
      // Several writes and no content-length: node sends the body chunked.
      const bytes = Buffer.from(step.body);
      for (let offset = 0; offset < bytes.length; offset += 700) outgoing.write(bytes.subarray(offset, offset + 700));
      outgoing.end();
    } else outgoing.end(step.body);
  });
}

const task = mockEnvironment.generate({ split: "train", seed: 3, index: 1, config: { keys: 5 } });
const call = (name: unknown, args?: unknown, extra: Record<string, unknown> = {}) => JSON.stringify({ name, arguments: args, ...extra });
const CALL = "/sessions/{id}/call";

const STEPS: Step[] = [
  { what: "a valid lookup", path: CALL, body: call("lookup", { key: task.key }), status: 200 },
  { what: "a lookup of a key that is not there", path: CALL, body: call("lookup", { key: "zzzz" }), status: 200 },
  { what: "an unknown tool", path: CALL, body: call("rm", {}), status: 200 },
  { what: "an undeclared argument", path: CALL, body: call("lookup", { key: task.key, pad: 1 }), status: 200 },
  { what: "no arguments field", path: CALL, body: JSON.stringify({ name: "lookup" }), status: 200 },
  { what: "broken JSON", path: CALL, body: "{", status: 400 },
  { what: "broken JSON, other text", path: CALL, body: '{"name": "lookup", "arguments": {"key": 1,}}', status: 400 },
  { what: "a JSON array", path: CALL, body: "[1, 2]", status: 400 },
  { what: "JSON null", path: CALL, body: "null", status: 400 },
  { what: "a JSON string", path: CALL, body: '"lookup"', status: 400 },
  { what: "an empty body", path: CALL, body: "", status: 400 },
  { what: "only whitespace", path: CALL, body: " \n", status: 400 },
  { what: "a number as the name", path: CALL, body: call(5, {}), status: 400 },
  { what: "arguments as an array", path: CALL, body: call("lookup", [1]), status: 400 },
  { what: "arguments as a string", path: CALL, body: call("lookup", "kalo"), status: 400 },
  { what: "a byte-order mark before the JSON", path: CALL, body: `\ufeff${call("lookup", { key: task.key })}`, status: 200 },
  { what: "a chunked body", path: CALL, body: call("lookup", { key: task.key, pad: "x".repeat(1500) }), chunked: true, status: 200 },
  { what: "non-ASCII arguments", path: CALL, body: call("lookup", { key: "ключ💥" }), status: 200 },
  { what: "a body over the limit, declared", path: CALL, body: call("lookup", { key: "y".repeat(5000) }), status: 413 },
  { what: "a body over the limit, chunked", path: CALL, body: call("lookup", { key: "y".repeat(5000) }), chunked: true, status: 413 },
  { what: "no token", path: CALL, body: call("lookup", { key: task.key }), token: null, status: 401 },
  { what: "a wrong token", path: CALL, body: "{", token: "s3creT", status: 401 },
  { what: "a token without Bearer", path: CALL, body: call("lookup", {}), token: "Bearer", status: 401 },
  { what: "an unknown session", path: "/sessions/no-such-session/call", body: call("lookup", {}), status: 404 },
  { what: "a percent-escaped session id", path: "/sessions/no%20such/call", body: call("lookup", {}), status: 404 },
  { what: "a query string", path: `${CALL}?verbose=1`, body: call("lookup", { key: task.key }), status: 200 },
  { what: "a GET", path: CALL, method: "GET", status: 404 },
  { what: "seq that is not a number", path: CALL, body: call("lookup", { key: task.key }, { seq: "1" }), status: 400 },
  { what: "seq 0", path: CALL, body: call("lookup", { key: task.key }, { seq: 0 }), status: 400 },
  { what: "seq 1, the first numbered call", path: CALL, body: call("lookup", { key: task.key }, { seq: 1 }), status: 200 },
  { what: "seq 1 again (a retry)", path: CALL, body: call("lookup", { key: task.key }, { seq: 1 }), status: 200 },
  { what: "seq 3, skipping 2", path: CALL, body: call("lookup", { key: task.key }, { seq: 3 }), status: 409 },
  { what: "finish", path: CALL, body: call("finish", { answer: task.answer }), status: 200 },
  { what: "a call after finish", path: CALL, body: call("lookup", { key: task.key }), status: 200 },
];

describe("tool calls: the fast path answers exactly as the Hono path", () => {
  const options: ServerAppOptions = { environments: { mock: mockEnvironment }, token: TOKEN, maxBodyBytes: LIMIT };
  let pair: ServerPair;
  before(async () => {
    pair = await startServerPair(options);
  });
  after(() => pair.close());

  async function createSession(port: number): Promise<string> {
    const created = await send(
      port,
      { what: "create", path: "/sessions", body: JSON.stringify({ env: "mock", split: "train", seed: 3, index: 1 }), status: 201 },
      "",
    );
    assert.equal(created.status, 201, created.text);
    return (JSON.parse(created.text) as { session_id: string }).session_id;
  }

  it("gives the same status, content type, connection header and body for every request in the sequence", async () => {
    const fastSession = await createSession(pair.fastPort);
    const simpleSession = await createSession(pair.simplePort);
    for (const step of STEPS) {
      const viaFast = await send(pair.fastPort, step, fastSession);
      const viaSimple = await send(pair.simplePort, step, simpleSession);
      assert.equal(viaFast.status, step.status, `${step.what}: ${viaFast.text}`);
      assert.deepEqual(viaFast, viaSimple, step.what);
      assert.match(viaFast.contentType ?? "", /^application\/json/, step.what);
      const body = JSON.parse(viaFast.text) as { error?: { code: string; message: string } };
      if (step.status !== 200) assert.match(body.error?.message ?? "", /\w{5,}/, `${step.what}: a message naming the problem`);
    }
    const stats = async (port: number) =>
      JSON.parse((await send(port, { what: "stats", path: "/stats", method: "GET", status: 200 }, "")).text) as Record<string, unknown>;
    const fastStats = await stats(pair.fastPort);
    assert.deepEqual(fastStats, await stats(pair.simplePort), "the same calls counted, tool errors and retries included");
    // 12 requests reached a tool (counted by hand from STEPS); the retry is answered from the stored reply.
    assert.equal(fastStats.toolCalls, 12);
    assert.equal(fastStats.repeatedCalls, 1);
  });
});
