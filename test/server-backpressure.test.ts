import assert from "node:assert/strict";
import { createServer as createHttpServer } from "node:http";
import { connect, createServer, type AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { errorAnswer, jsonAnswer } from "../src/server/answers.ts";
import { MAX_UNSENT_BYTES, createConnectionHandler } from "../src/server/http-connection.ts";

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
