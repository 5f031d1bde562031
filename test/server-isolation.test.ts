import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { after, before, describe, it } from "node:test";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";
import { createSessionRequest as create, nextFrame, openSocket, send, unhandledDuring } from "./support/server-requests.ts";

/**
 * `toolgym serve`, round two (issue 36): nothing one client sends stops the others. One test per finding of
 * the second hostile probe that is about crashes, stalls and isolation; budgets and limits are in
 * server-budgets.test.ts. Loopback only; every wait is bounded.
 */
const TOKEN_A = "token-of-client-a-0123";
const TOKEN_B = "token-of-client-b-4567";
const authA = { authorization: `Bearer ${TOKEN_A}` };
const authB = { authorization: `Bearer ${TOKEN_B}` };

describe("toolgym serve: one client cannot crash, freeze or reach into the others (issue 36)", () => {
  let server: RunningServer;
  let full: RunningServer;
  let dataDir: string;

  before(async () => {
    const work = mkdtempSync(join(tmpdir(), "toolgym-isolation-"));
    dataDir = join(work, "data");
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, "broken.jsonl"), "not json\n");
    const resources = { dataDirectories: [dataDir], models: { user: "http://127.0.0.1:9/v1#tiny" } };
    server = await startServer({ environments: ENVIRONMENTS, port: 0, tokens: [TOKEN_A, TOKEN_B], resources, headMilliseconds: 5000 });
    // A server whose session quota is already full (finding 1).
    full = await startServer({ environments: ENVIRONMENTS, port: 0, maxSessions: 2, resources });
    for (let index = 0; index < 2; index++) assert.equal((await create(full.port, { env: "mock" })).status, 201);
  });
  after(async () => {
    await server.close();
    await full.close();
  });

  it("1. answers 429 at a full quota to configs naming an unknown model or a bad data file, and does not crash", async () => {
    const unhandled = await unhandledDuring(async () => {
      const model = await create(full.port, { env: "tau2_mock", config: { customer: "tool", user_model: "no-such-model" } });
      assert.equal(model.status, 429);
      const data = await create(full.port, { env: "musique", config: { file: "broken.jsonl" } });
      assert.equal(data.status, 429);
      const { socket } = await openSocket(`ws://127.0.0.1:${full.port}/ws`);
      socket.send(JSON.stringify({ type: "reset", data: { env: "tau2_mock", config: { customer: "tool", user_model: "no-such-model" } } }));
      const frame = await nextFrame(socket);
      assert.equal(frame.type, "error");
      socket.close();
    });
    assert.deepEqual(unhandled, [], "every promise is awaited or caught");
    assert.equal((await send(full.port, "GET", "/health")).status, 200);
  });

  it("2. answers a finish whose answer is 80,000 quotes between two letters without holding the loop", async () => {
    const opened = await create(server.port, { env: "search_plan_act", config: {} }, authA);
    assert.equal(opened.status, 201);
    const id = opened.json.session_id as string;
    const answer = `a${"'".repeat(80_000)}b`;
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const call = await send(server.port, "POST", `/sessions/${id}/call`, {
      body: JSON.stringify({ name: "update_record", arguments: { id: "x", field: "y", value: answer } }),
      headers: authA,
    });
    const finish = await send(server.port, "POST", `/sessions/${id}/call`, {
      body: JSON.stringify({ name: "finish", arguments: { status: "done", answer } }),
      headers: authA,
    });
    delay.disable();
    assert.equal(call.status, 200);
    assert.equal(finish.status, 200);
    // Quadratic, the call held the loop for 13 s; a bound a hundred times the 100 ms leaves room for a loaded machine.
    assert.ok(delay.max / 1e6 < 1000, `the loop stalled for ${Math.round(delay.max / 1e6)} ms`);
  });

  it("9. answers 400 to config given as JSON text that nests 100,000 deep", async () => {
    const deep = `{"user_chat_template_kwargs":${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}}`;
    const reply = await create(server.port, { env: "tau2_mock", config: deep }, authA);
    assert.equal(reply.status, 400, reply.text.slice(0, 200));
    assert.equal(reply.json.error?.code, "JSON_TOO_DEEP");
  });

  it("10. a session belongs to the token that created it: another token gets 404 on every route", async () => {
    const opened = await create(server.port, { env: "mock" }, authA);
    const id = opened.json.session_id as string;
    const routes: [string, string, string?][] = [
      ["GET", `/sessions/${id}`],
      ["POST", `/sessions/${id}/call`, JSON.stringify({ name: "submit", arguments: { answer: "x" } })],
      ["GET", `/sessions/${id}/reward`],
      ["POST", `/sessions/${id}/reward`, "{}"],
      ["DELETE", `/sessions/${id}`],
    ];
    for (const [method, path, body] of routes) {
      const reply = await send(server.port, method, path, { body, headers: authB });
      assert.equal(reply.status, 404, `${method} ${path}`);
      assert.equal(reply.json.error?.code, "SESSION_UNKNOWN");
    }
    const { socket } = await openSocket(`ws://127.0.0.1:${server.port}/ws`, authB);
    socket.send(JSON.stringify({ type: "state" }));
    assert.equal((await nextFrame(socket)).data.episode_id, null);
    socket.close();
    assert.equal((await send(server.port, "GET", `/sessions/${id}`, { headers: authA })).status, 200, "the owner still has it");
    assert.equal((await send(server.port, "DELETE", `/sessions/${id}`, { headers: authA })).status, 200);
  });

  it("11. answers a head with bare-LF line endings at once (400), not at the head deadline", async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(server.port, "127.0.0.1", () => socket.write("GET /health HTTP/1.1\nHost: 127.0.0.1\n\n"));
      let text = "";
      socket.on("data", (chunk) => (text += chunk.toString("latin1")));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
      setTimeout(() => socket.destroy(), 4000);
    });
    assert.match(reply, /^HTTP\/1\.1 400 /, `answered: ${JSON.stringify(reply.slice(0, 60))}`);
  });

  it("11. refuses a WebSocket reset with fields POST /sessions refuses", async () => {
    const { socket } = await openSocket(`ws://127.0.0.1:${server.port}/ws`, authA);
    socket.send(JSON.stringify({ type: "reset", data: { env: "mock", seeed: 3 } }));
    const frame = await nextFrame(socket);
    assert.equal(frame.type, "error");
    assert.match(String(frame.data.message), /unknown field\(s\) 'seeed'/);
    socket.send(JSON.stringify({ type: "reset", data: "mock" }));
    assert.equal((await nextFrame(socket)).type, "error", "data that is not an object is refused, not read as {}");
    socket.close();
  });
});
