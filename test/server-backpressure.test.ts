import assert from "node:assert/strict";
import { createServer as createHttpServer } from "node:http";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { describe, it } from "node:test";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import type { AnyEnvironment } from "../src/core/index.ts";
import { errorAnswer, jsonAnswer } from "../src/server/answers.ts";
import { MAX_UNSENT_BYTES, createConnectionHandler } from "../src/server/http-connection.ts";
import { OpenEnvConnection } from "../src/server/openenv-protocol.ts";
import { startServer } from "../src/server/start-server.ts";
import WebSocket from "ws";

/** One answer of about 1 MiB: a client pipelining requests for it and never reading makes the server hold them. */
const ANSWER = jsonAnswer(200, JSON.stringify({ filler: "x".repeat(1024 * 1024) }));
const REQUESTS = 200;

describe("the socket reader and a client that does not read its answers", () => {
  for (const sharedReadBuffer of [true, false]) {
    it(`stops answering while ${MAX_UNSENT_BYTES} bytes wait unsent, and answers the rest in order once read (${sharedReadBuffer ? "shared buffer" : "streams"})`, async () => {
      let answered = 0;
      const http = createHttpServer();
      const connections = createConnectionHandler({
        http,
        maxBodyBytes: 4096,
        keepAliveMilliseconds: 60_000,
        // Any other target would mean a request was read wrongly (its bytes overwritten while it waited).
        route: (method, target) => () => (answered++, method === "GET" && target === `/big/${answered}` ? ANSWER : errorAnswer(404, "WRONG", target)),
        checkPlace: () => undefined,
        sharedReadBuffer,
      });
      const server = createServer({ pauseOnConnect: true, allowHalfOpen: true }, connections);
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
      try {
        socket.pause(); // the client reads nothing yet
        await new Promise((resolve) => socket.once("connect", resolve));
        // In four writes apart, so that requests also arrive while the reader waits for the client to read.
        for (let batch = 0; batch < 4; batch++) {
          const numbers = Array.from({ length: REQUESTS / 4 }, (_, index) => batch * (REQUESTS / 4) + index + 1);
          socket.write(numbers.map((number) => `GET /big/${number} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`).join(""));
          await new Promise((resolve) => setTimeout(resolve, 400));
        }
        // Without the limit all 200 MiB of answers are made and held; with it, only what the kernel's socket buffers take, plus one.
        assert.ok(answered < 40, `${answered} of ${REQUESTS} answers made while the client read nothing`);
        let received = 0;
        let statusLines = 0;
        let tail = "";
        socket.on("data", (chunk: Buffer) => {
          received += chunk.length;
          const text = tail + chunk.toString("latin1");
          statusLines += text.split("HTTP/1.1 200 OK").length - 1;
          tail = text.slice(-20);
        });
        socket.resume();
        const whole = REQUESTS * ANSWER.bytes;
        for (let waited = 0; received < whole && waited < 600; waited++) await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(answered, REQUESTS);
        assert.equal(statusLines, REQUESTS);
        assert.ok(received > whole, `${received} bytes received for ${REQUESTS} answers of ${ANSWER.bytes}`);
      } finally {
        socket.destroy();
        connections.closeAll();
        server.close();
      }
    });
  }
});

/** Waits until `count()` has not changed for a second (at most a minute). */
async function settled(count: () => number): Promise<number> {
  let last = -1;
  for (let waited = 0; waited < 60 && count() !== last; waited++) {
    last = count();
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return count();
}

describe("an OpenEnv WebSocket client that does not read its replies", () => {
  it(`stops reading its frames while ${MAX_UNSENT_BYTES} bytes of replies wait unsent, and answers them all once read`, async () => {
    const FRAMES = 6000;
    let handled = 0;
    const handle = OpenEnvConnection.prototype.handle;
    // Counts the frames the server took from the socket; each list_tools reply on tau2_telecom is about 10 KB.
    OpenEnvConnection.prototype.handle = function (text: string) {
      handled++;
      return handle.call(this, text);
    };
    const server = await startServer({ environments: { tau2_telecom: ENVIRONMENTS.tau2_telecom as AnyEnvironment }, port: 0 });
    const socket = new WebSocket(`${server.url.replace("http", "ws")}/ws`);
    try {
      await new Promise((resolve) => socket.once("open", resolve));
      let replies = 0;
      socket.on("message", () => replies++);
      socket.send('{"type":"reset","data":{"config":{"customer":"tool"}}}');
      while (replies === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      socket.pause(); // the client reads nothing more
      for (let frame = 0; frame < FRAMES; frame++) socket.send('{"type":"step","data":{"type":"list_tools"}}');
      // Without the limit every frame is answered (about 60 MB held); with it, what the kernel's socket buffers take.
      const taken = await settled(() => handled);
      assert.ok(taken < FRAMES / 2, `${taken} of ${FRAMES + 1} frames handled while the client read nothing`);
      socket.resume();
      for (let waited = 0; replies < FRAMES + 1 && waited < 600; waited++) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(replies, FRAMES + 1);
      assert.equal(handled, FRAMES + 1);
    } finally {
      OpenEnvConnection.prototype.handle = handle;
      socket.terminate();
      await server.close();
    }
  });
});

describe("bodies node:http reads for the socket reader (chunked)", () => {
  it("count against the same cap on bytes held as the reader's own, and are given back", async () => {
    const server = await startServer({ environments: { mock: mockEnvironment }, port: 0, maxHeldBytes: 4 * 1024 * 1024 });
    const sockets: Socket[] = [];
    try {
      // 24 chunked bodies of 512 KiB each, none finished: 12 MiB under a 4 MiB cap (each under the 1 MiB body limit).
      for (let index = 0; index < 24; index++) {
        const socket = connect(server.port, "127.0.0.1");
        socket.on("error", () => undefined);
        await new Promise((resolve) => socket.once("connect", resolve));
        socket.write("POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n");
        socket.write(`80000\r\n${" ".repeat(512 * 1024)}\r\n`);
        sockets.push(socket);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const closed = sockets.filter((socket) => socket.destroyed || socket.readableEnded).length;
      assert.ok(closed >= 16, `${closed} of 24 unfinished 512 KiB chunked bodies closed under a 4 MiB cap`);
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 300));
      // What the closed bodies held was given back: a new chunked request is read whole and answered.
      const reply = await new Promise<string>((resolve) => {
        const socket = connect(server.port, "127.0.0.1");
        let text = "";
        socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
        socket.on("end", () => resolve(text));
        const body = JSON.stringify({ env: "mock" }).padEnd(900 * 1024, " ");
        socket.write(`POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`);
        socket.write(`${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
      });
      assert.match(reply, /^HTTP\/1\.1 201/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.close();
    }
  });
});

describe("a WebSocket message not complete yet", () => {
  it("counts against the bytes held, must arrive within the request deadline, and pings keep an idle socket", async () => {
    const server = await startServer({
      environments: { mock: mockEnvironment },
      port: 0,
      maxHeldBytes: 4 * 1024 * 1024,
      headMilliseconds: 1000,
      requestMilliseconds: 1500,
    });
    const url = `${server.url.replace("http", "ws")}/ws`;
    const open = async () => {
      const socket = new WebSocket(url);
      socket.on("error", () => undefined);
      await new Promise((resolve) => socket.once("open", resolve));
      return socket;
    };
    const sockets: WebSocket[] = [];
    try {
      // Pings only, for longer than the deadline: not a message in progress, so the socket stays and is answered.
      const idle = await open();
      sockets.push(idle);
      for (let ping = 0; ping < 5; ping++) {
        idle.ping();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const answered = new Promise((resolve) => idle.once("message", resolve));
      idle.send('{"type":"state"}');
      assert.equal(JSON.parse(String(await answered)).type, "state");
      // A message begun and never finished (a fragment without FIN) is closed after the deadline.
      const stalled = await open();
      sockets.push(stalled);
      const closedLate = new Promise((resolve) => stalled.once("close", resolve));
      stalled.send('{"type":"sta', { fin: false });
      const began = Date.now();
      const outcome = await Promise.race([closedLate.then(() => "closed"), new Promise((resolve) => setTimeout(resolve, 10_000, "open"))]);
      assert.equal(outcome, "closed", "a message begun and never finished, 10 s after the 1.5 s deadline");
      assert.ok(Date.now() - began < 5000, `closed ${Date.now() - began} ms after its message began`);
      // 24 messages of 512 KiB begun at once, 12 MiB under a 4 MiB cap (each under the 1 MiB frame limit).
      const big = await Promise.all(Array.from({ length: 24 }, open));
      sockets.push(...big);
      for (const socket of big) socket.send(" ".repeat(512 * 1024), { fin: false });
      const closedCount = () => big.filter((socket) => socket.readyState !== WebSocket.OPEN).length;
      for (let waited = 0; closedCount() < 16 && waited < 300; waited++) await new Promise((resolve) => setTimeout(resolve, 100));
      const closed = closedCount();
      assert.ok(closed >= 16, `${closed} of 24 unfinished 512 KiB messages closed under a 4 MiB cap`);
    } finally {
      for (const socket of sockets) socket.terminate();
      await server.close();
    }
  });
});
