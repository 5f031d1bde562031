import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type WebSocket from "ws";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";
import { startHeldModel, type HeldModel } from "./support/held-model.ts";
import { createSessionRequest as create, nextFrame, openSocket, send } from "./support/server-requests.ts";

/**
 * `toolgym serve`, round two (issue 36): every byte one client makes the server hold counts against a budget,
 * and clients without a token cannot crowd out those with one. Loopback only; every wait is bounded.
 */
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;
const TOKEN = "token-of-the-budget-client";
const auth = { authorization: `Bearer ${TOKEN}` };
const pause = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));
/** Waits for a condition (the test's own timeout bounds the wait). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await pause(10);
}

function heapAfterCollection(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

function closedWithin(socket: Socket | WebSocket, milliseconds: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), milliseconds);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

describe("toolgym serve holds what one client sends to a budget (issue 36)", () => {
  let server: RunningServer;
  let model: HeldModel;

  before(async () => {
    model = await startHeldModel();
    server = await startServer({
      environments: ENVIRONMENTS,
      port: 0,
      tokens: [TOKEN],
      resources: { models: { user: `${model.url}#tiny` } },
      headMilliseconds: 800,
      requestMilliseconds: 1500,
      maxConnections: 30,
      maxHeldBytes: 6 * 1024 * 1024,
      // Long enough that no session here expires mid-test (an expiry aborts a step waiting for the user model).
      idleSeconds: 60,
    });
  });
  after(async () => {
    await server.close();
    await model.close();
  });

  it("3. keeps no copy of rejected calls' tool and argument names, and bounds the ledger whatever max_turns", async () => {
    const before = heapAfterCollection();
    const ids: string[] = [];
    const name = "n".repeat(512 * 1024);
    for (let session = 0; session < 16; session++) {
      const opened = await create(server.port, { env: "mock" }, auth);
      const id = opened.json.session_id as string;
      ids.push(id);
      for (let call = 0; call < 4; call++) {
        const body = call % 2 === 0 ? { name, arguments: {} } : { name: "submit", arguments: { [name]: 1 } };
        assert.equal((await send(server.port, "POST", `/sessions/${id}/call`, { body: JSON.stringify(body), headers: auth })).status, 200);
      }
    }
    const grown = heapAfterCollection() - before;
    // Kept whole, the 64 rejected calls held 32 MiB until their sessions closed.
    assert.ok(grown < 8 * 1024 * 1024, `the heap grew by ${Math.round(grown / 1024 / 1024)} MiB`);
    for (const id of ids) await send(server.port, "DELETE", `/sessions/${id}`, { headers: auth });
    // Any number of turns: past the first 256 format errors only the count grows, not the messages.
    const long = await create(server.port, { env: "mock", max_turns: 1e9 }, auth);
    assert.equal(long.status, 201);
    const id = long.json.session_id as string;
    for (let call = 0; call < 300; call++)
      await send(server.port, "POST", `/sessions/${id}/call`, { body: JSON.stringify({ name: `unknown-${call}`, arguments: {} }), headers: auth });
    const ledger = server.store.get(id).driver.formatErrors;
    assert.equal(ledger.length, 300);
    assert.equal(new Set(ledger.slice(256).map((error) => error.message)).size, 1, "one fixed note past the first 256");
    await send(server.port, "DELETE", `/sessions/${id}`, { headers: auth });
  });

  it("4. stops reading a WebSocket's frames while a step waits for the simulated user", async () => {
    const { socket } = await openSocket(`ws://127.0.0.1:${server.port}/ws`, auth);
    socket.send(JSON.stringify({ type: "reset", data: { env: "tau2_mock", config: { customer: "tool", user_model: "user" } } }));
    assert.equal((await nextFrame(socket)).type, "observation");
    const held = model.held;
    const step = { type: "step", data: { type: "call_tool", tool_name: "send_message_to_user", arguments: { content: "How can I help?" } } };
    socket.send(JSON.stringify(step));
    // The step waits once the model holds its request.
    await until(() => model.held > held);
    // 24 MiB of frames behind the pending step: more than the loopback socket buffers take.
    const filler = JSON.stringify({ type: "state", pad: "x".repeat(1000 * 1000) });
    for (let frame = 0; frame < 24; frame++) socket.send(filler);
    // Until the client's unsent bytes stop falling (ten looks in a row): were the server reading, they would fall to 0.
    let last = -1;
    for (let unchanged = 0; unchanged < 10; unchanged = socket.bufferedAmount === last ? unchanged + 1 : 0) {
      last = socket.bufferedAmount;
      await pause(50);
    }
    assert.ok(socket.readyState === socket.OPEN, "the connection stays open (it is the client's socket that fills)");
    assert.ok(socket.bufferedAmount > 4 * 1024 * 1024, `the server read ${24 * 1000 * 1000 - socket.bufferedAmount} bytes behind the pending step`);
    socket.terminate();
  });

  it("4. counts a fragmented message against the budget through pings, and holds it to the request deadline", async () => {
    const sockets: WebSocket[] = [];
    for (let index = 0; index < 8; index++) sockets.push((await openSocket(`ws://127.0.0.1:${server.port}/ws`, auth)).socket);
    const closes = sockets.map((socket) => closedWithin(socket, 4000));
    // Eight unfinished messages of 900 KB (7 MB, over the 6 MiB budget), with pings between the fragments.
    for (let piece = 0; piece < 9; piece++) {
      for (const socket of sockets) {
        socket.send("x".repeat(100_000), { fin: false });
        socket.ping();
      }
      await pause(50);
    }
    // Past the request deadline, still unfinished: pings every 200 ms do not restart it.
    for (let tick = 0; tick < 10; tick++) {
      for (const socket of sockets) if (socket.readyState === socket.OPEN) socket.ping();
      await pause(200);
    }
    const closed = (await Promise.all(closes)).filter(Boolean).length;
    assert.equal(closed, sockets.length, "every connection holding an unfinished message past the budget or the deadline is closed");
  });

  it("5. closes connections that show no token, and they cannot crowd out a client with one", async () => {
    // More idle sockets than the connection cap (30), none of which ever sends a byte.
    const idle: Socket[] = [];
    for (let index = 0; index < 40; index++) {
      const socket = connect(server.port, "127.0.0.1");
      socket.on("error", () => undefined);
      idle.push(socket);
    }
    await pause(200);
    const reply = await send(server.port, "GET", "/stats", { headers: auth });
    assert.equal(reply.status, 200, "a client with the token is served while unauthenticated sockets fill the cap");
    // A request drawing a 401 closes its connection; an idle unauthenticated one goes at the head deadline.
    const refused = connect(server.port, "127.0.0.1");
    refused.on("error", () => undefined);
    refused.write("GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    let answered = "";
    refused.on("data", (chunk: Buffer) => (answered += chunk.toString("latin1")));
    assert.ok(await closedWithin(refused, 2000), "closed after its 401");
    assert.match(answered, /^HTTP\/1\.1 401 /);
    const lingering = connect(server.port, "127.0.0.1");
    lingering.on("error", () => undefined);
    assert.ok(await closedWithin(lingering, 3000), "closed at the head deadline without a token");
    for (const socket of idle) socket.destroy();
  });

  it("5. closes an idle WebSocket", async () => {
    const idling = await startServer({ environments: ENVIRONMENTS, port: 0, tokens: [TOKEN], idleSeconds: 1 });
    try {
      const { socket } = await openSocket(`ws://127.0.0.1:${idling.port}/ws`, auth);
      // Closed by the server after a second without a frame; the test's own timeout bounds the wait.
      const code = await new Promise<number>((resolve) => socket.once("close", (closeCode: number) => resolve(closeCode)));
      assert.equal(code, 1001, "closed as idle");
    } finally {
      await idling.close();
    }
  });
});
