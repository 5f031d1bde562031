import assert from "node:assert/strict";
import { connect, createServer, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import { discardLimitBytes } from "../src/server/answers.ts";
import { adopt } from "../src/server/http-connection.ts";
import { headEnd, parseRequestHead, type RequestHead } from "../src/server/http-head.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";

/**
 * The socket-level reader of `toolgym serve` (src/server/http-connection.ts): tool calls it answers itself,
 * everything else relayed to or handed over to node:http. These tests speak raw HTTP/1.1 so they control
 * framing (pipelining, split writes, half-close) in ways an HTTP client library would not.
 */
/** A head as read, with its target as text. */
type ReadHead = Omit<RequestHead, "targetStart" | "targetEnd" | "hostStart" | "hostEnd"> & { target: string; host: string | undefined };

/** Frames `text` (a head without its blank line) the way http-connection.ts does: found in the bytes, then read. */
function frame(text: string, maxBodyBytes: number): ReadHead | undefined {
  const bytes = Buffer.from(`${text}\r\n\r\n{"a":1}`, "latin1");
  assert.equal(headEnd(bytes, bytes.length), text.length, "the blank line is found where the head ends");
  const head = parseRequestHead(bytes, text.length, maxBodyBytes);
  if (!head) return undefined;
  const { targetStart, targetEnd, hostStart, hostEnd, ...rest } = head;
  return { ...rest, target: bytes.toString("latin1", targetStart, targetEnd), host: hostStart < 0 ? undefined : bytes.toString("latin1", hostStart, hostEnd) };
}

/**
 * The head reader as first written (a regular expression over the head decoded as latin1, then a search per
 * header), kept here as the reference the one-pass byte reader must agree with on every head.
 */
function referenceHead(text: string, maxBodyBytes: number): ReadHead | undefined {
  const match = /^(GET|POST|PUT|PATCH|DELETE) (\/[!-~]*) HTTP\/1\.1((?:\r\n[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t\x20-\x7e\x80-\xff]*)*)$/.exec(text);
  if (!match) return undefined;
  const headers = match[3] as string;
  const lower = headers.toLowerCase();
  if (lower.includes("\r\ntransfer-encoding:") || lower.includes("\r\nupgrade:") || lower.includes("\r\nexpect:")) return undefined;
  const header = (key: string): string | null | false => {
    const at = lower.indexOf(key);
    if (at < 0) return null;
    if (lower.includes(key, at + key.length)) return false;
    const end = headers.indexOf("\r\n", at + key.length);
    return headers.slice(at + key.length, end < 0 ? headers.length : end).replace(/^[ \t]+|[ \t]+$/g, "");
  };
  const declared = header("\r\ncontent-length:");
  const connection = header("\r\nconnection:");
  const authorization = header("\r\nauthorization:");
  const host = header("\r\nhost:");
  const origin = header("\r\norigin:");
  if (declared === false || connection === false || authorization === false || host === false || origin === false) return undefined;
  if (declared !== null && !/^\d{1,15}$/.test(declared)) return undefined;
  const length = declared === null ? 0 : Number(declared);
  if (length > maxBodyBytes) return undefined;
  const close = connection !== null && connection.toLowerCase() === "close";
  const plain = (connection === null || close || connection.toLowerCase() === "keep-alive") && host !== null;
  const bodyStart = text.length + 4;
  return {
    method: match[1] as string,
    target: match[2] as string,
    bodyStart,
    total: bodyStart + length,
    close,
    plain,
    authorization: authorization ?? undefined,
    origin: origin ?? undefined,
    host: host ?? undefined,
  };
}

describe("request heads (http-head.ts)", () => {
  const head = (lines: string[]) => frame(lines.join("\r\n"), 1000);

  it("frames a plain tool call and reads the headers it needs", () => {
    const text = ["POST /sessions/abc/call HTTP/1.1", "Host: 127.0.0.1:8765", "Content-Length:  12 ", "AUTHORIZATION: Bearer t0k", "Connection: keep-alive"];
    const parsed = head(text);
    const bodyStart = text.join("\r\n").length + 4;
    assert.deepEqual(parsed, {
      method: "POST",
      target: "/sessions/abc/call",
      bodyStart,
      total: bodyStart + 12,
      close: false,
      plain: true,
      authorization: "Bearer t0k",
      host: "127.0.0.1:8765",
      origin: undefined,
    });
    assert.equal(head(["GET /health HTTP/1.1", "host: x"])?.total, "GET /health HTTP/1.1\r\nhost: x".length + 4, "no body without Content-Length");
    assert.equal(head(["POST /x HTTP/1.1", "Host: x", "Connection: Close"])?.close, true);
    assert.equal(
      head(["POST /x HTTP/1.1", "Host: x", "Content-Length: 1000"])?.total,
      "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000".length + 4 + 1000,
      "a body at the limit",
    );
    assert.equal(head(["GET /~a!'$ HTTP/1.1", "Host: x"])?.target, "/~a!'$", "every visible character may be in a target");
  });

  it("leaves node:http whatever it might read differently", () => {
    const refused: [string, string[]][] = [
      ["HTTP/1.0", ["POST /x HTTP/1.0", "Host: x"]],
      ["HEAD", ["HEAD /x HTTP/1.1", "Host: x"]],
      ["an absolute target", ["GET http://x/ HTTP/1.1", "Host: x"]],
      ["chunked", ["POST /x HTTP/1.1", "Host: x", "Transfer-Encoding: chunked"]],
      ["two lengths", ["POST /x HTTP/1.1", "Host: x", "Content-Length: 1", "content-length: 1"]],
      ["a length that is not a number", ["POST /x HTTP/1.1", "Host: x", "Content-Length: 1e3"]],
      ["a body over the limit", ["POST /x HTTP/1.1", "Host: x", "Content-Length: 1001"]],
      ["an upgrade", ["GET /ws HTTP/1.1", "Host: x", "Upgrade: websocket", "Connection: Upgrade"]],
      ["Expect", ["POST /x HTTP/1.1", "Host: x", "Expect: 100-continue"]],
      ["a space before the colon", ["POST /x HTTP/1.1", "Host: x", "Content-Length : 1"]],
      ["a folded header", ["POST /x HTTP/1.1", "Host: x", "X-A: 1", " 2"]],
      ["a control character", ["POST /x HTTP/1.1", "Host: x", "X-A: a\u0001b"]],
      ["two tokens", ["POST /x HTTP/1.1", "Host: x", "Authorization: a", "Authorization: b"]],
    ];
    for (const [what, lines] of refused) assert.equal(head(lines), undefined, what);
    assert.equal(head(["POST /x HTTP/1.1", "Content-Length: 0"])?.plain, false, "no Host: node:http answers 400");
    assert.equal(head(["POST /x HTTP/1.1", "Host: x", "Connection: keep-alive, TE"])?.plain, false);
  });

  it("reads every head as the regular-expression reader it replaced does", () => {
    // Heads built from pieces near every rule (names in any case, repeats, odd bytes, spaces, lengths),
    // then mutated byte by byte; a seeded generator so a failure repeats.
    let state = 20_261_202;
    const random = (below: number): number => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return Math.floor(state / 65_536) % below; // the high bits: an LCG's low bits repeat quickly
    };
    const pick = <T>(items: readonly T[]): T => items[random(items.length)] as T;
    // Lines node:http reads the usual way, and lines that each break a rule; mostly the former, so that
    // many heads are accepted and the values read from them are compared too.
    const usual = [
      "Host: 127.0.0.1:8765",
      "host:x",
      "Content-Length: 12",
      "content-length:0",
      "Content-Length: \t 1000 ",
      "Content-Length: 0012",
      "Connection: close",
      "connection:  Keep-Alive\t",
      "Connection: keep-alive, TE",
      "Connection: \u00e7lose",
      "Authorization: Bearer t\u00f6k",
      "AUTHORIZATION:",
      "Transfer-Encodings: x",
      "Expectation: none",
      "X-Thing: \u00ff\u0080 ok",
      "X~#Odd!: value",
      "Content-Type: application/json",
    ];
    const odd = [
      "HOST : x",
      "Content-Length: 1001",
      "Content-Length: 1234567890123456",
      "Content-Length: -1",
      "Content-Length:",
      "Transfer-Encoding: chunked",
      "Upgrade: websocket",
      "Expect: 100-continue",
      "X-Thing: a\u0001b",
      ": no name",
      " folded",
    ];
    const requestLines = ["POST /sessions/abc/call HTTP/1.1", "GET / HTTP/1.1", "DELETE /x?y=%20 HTTP/1.1", "GET /~a!$ HTTP/1.1", "PUT /\u00e9 HTTP/1.1"];
    const oddRequestLines = ["PATCH /a HTTP/1.0", "post /x HTTP/1.1", "POST  /x HTTP/1.1", "HEAD /x HTTP/1.1", "GET http://x/ HTTP/1.1", "POST /x HTTP/1.1 "];
    const line = () => (random(4) === 0 ? pick(odd) : pick(usual));
    let heads = 0;
    let accepted = 0;
    for (let round = 0; round < 4000; round++) {
      let text = [random(8) === 0 ? pick(oddRequestLines) : pick(requestLines), ...Array.from({ length: random(6) }, line)].join("\r\n");
      for (let mutations = random(4) - 1; mutations > 0; mutations--) {
        const at = random(text.length + 1);
        const inserted = pick(["\r", "\n", "\r\n", " ", "\t", ":", "A", "\u0000", "\u007f", "\u00e9", ""]);
        text = text.slice(0, at) + inserted + text.slice(at + random(2));
      }
      if (`${text}\r\n\r\n`.indexOf("\r\n\r\n") !== text.length) continue; // the head ends at its first blank line
      const expected = referenceHead(text, 1000);
      assert.deepEqual(frame(text, 1000), expected, JSON.stringify(text));
      heads++;
      if (expected) accepted++;
    }
    assert.ok(heads > 3000 && accepted > 400 && heads - accepted > 1000, `both outcomes were exercised: ${accepted} of ${heads} accepted`);
  });
});

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Reads HTTP/1.1 responses off a socket in order, each framed by its Content-Length. */
function responses(socket: Socket): { next(): Promise<RawReply>; closed: Promise<void> } {
  let buffered = Buffer.alloc(0);
  const waiting: (() => void)[] = [];
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    waiting.splice(0).forEach((wake) => wake());
  });
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  socket.on("close", () => waiting.splice(0).forEach((wake) => wake()));
  const next = async (): Promise<RawReply> => {
    for (;;) {
      const end = buffered.indexOf("\r\n\r\n");
      if (end >= 0) {
        const [statusLine, ...lines] = buffered.subarray(0, end).toString("latin1").split("\r\n");
        const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
        const length = Number(headers["content-length"] ?? 0);
        if (buffered.length >= end + 4 + length) {
          const body = buffered.subarray(end + 4, end + 4 + length).toString("utf8");
          buffered = buffered.subarray(end + 4 + length);
          return { status: Number(statusLine?.split(" ")[1]), headers, body };
        }
      }
      if (socket.destroyed || socket.readableEnded) throw new Error(`connection closed with ${buffered.length} bytes unread`);
      await new Promise<void>((wake) => waiting.push(wake));
    }
  };
  return { next, closed };
}

function post(path: string, body: string, extra = ""): string {
  return `POST ${path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
}

for (const sharedReadBuffer of [true, false])
  describe(`toolgym serve reading HTTP off the socket (${sharedReadBuffer ? "one shared read buffer" : "streams"})`, () => {
    let server: RunningServer;
    const open = (): Promise<Socket> =>
      new Promise((resolve, reject) => {
        const socket = connect(server.port, "127.0.0.1", () => resolve(socket));
        socket.once("error", reject);
      });
    const task = mockEnvironment.generate({ split: "train", seed: 2, index: 4, config: { keys: 5 } });
    const createBody = JSON.stringify({ env: "mock", split: "train", seed: 2, index: 4 });
    const lookup = JSON.stringify({ name: "lookup", arguments: { key: task.key } });
    const looked = JSON.stringify({ key: task.key, value: task.answer });

    before(async () => {
      // "test" is the Host these raw requests name.
      server = await startServer({ environments: { mock: mockEnvironment }, port: 0, maxBodyBytes: 4096, sharedReadBuffer, allowedHosts: ["test"] });
    });
    after(async () => {
      await server.close();
    });

    it("answers pipelined requests in order, a relayed one among them", async () => {
      const socket = await open();
      const reader = responses(socket);
      socket.write(post("/sessions", createBody));
      const created = await reader.next();
      assert.equal(created.status, 201);
      const id = (JSON.parse(created.body) as { session_id: string }).session_id;
      // One write: a call, a request relayed to node:http (an odd Connection header is node's to judge), and two more calls.
      socket.write(
        post(`/sessions/${id}/call`, lookup) +
          `GET /sessions/${id} HTTP/1.1\r\nHost: test\r\nConnection: x-hop\r\n\r\n` +
          post(`/sessions/${id}/call`, lookup).repeat(2),
      );
      const first = await reader.next();
      assert.equal(first.status, 200);
      assert.deepEqual(JSON.parse(first.body), { content: looked, is_error: false, done: false, calls: 1 });
      assert.equal(first.headers["content-type"], "application/json");
      assert.equal(first.headers.connection, "keep-alive");
      const described = await reader.next();
      assert.equal(described.status, 200);
      assert.equal((JSON.parse(described.body) as { calls: number }).calls, 1, "the relayed request saw only the call before it");
      assert.equal((JSON.parse((await reader.next()).body) as { calls: number }).calls, 2);
      assert.equal((JSON.parse((await reader.next()).body) as { calls: number }).calls, 3);
      socket.destroy();
    });

    it("answers calls to different sessions on one connection, each from its own session", async () => {
      const socket = await open();
      const reader = responses(socket);
      const ids: string[] = [];
      for (let index = 0; index < 2; index++) {
        socket.write(post("/sessions", createBody));
        ids.push((JSON.parse((await reader.next()).body) as { session_id: string }).session_id);
      }
      const [first, second] = ids as [string, string];
      assert.equal(first.length, second.length, "targets of the same length, told apart by their bytes");
      // The connection remembers its last call target; every change of target must be noticed.
      const order = [first, first, second, first, second, second, "0".repeat(first.length), first];
      const expected = [1, 2, 1, 3, 2, 3, 404, 4];
      socket.write(order.map((id) => post(`/sessions/${id}/call`, lookup)).join(""));
      for (const [index, calls] of expected.entries()) {
        const reply = await reader.next();
        if (calls === 404) assert.equal(reply.status, 404, `call ${index}: ${reply.body}`);
        else assert.equal((JSON.parse(reply.body) as { calls: number }).calls, calls, `call ${index}`);
      }
      socket.destroy();
    });

    it("answers a call sent a few bytes at a time, and one whose sender half-closes after it", async () => {
      const socket = await open();
      const reader = responses(socket);
      socket.write(post("/sessions", createBody));
      const id = (JSON.parse((await reader.next()).body) as { session_id: string }).session_id;
      const bytes = Buffer.from(post(`/sessions/${id}/call`, lookup));
      for (let offset = 0; offset < bytes.length; offset += 7) {
        socket.write(bytes.subarray(offset, offset + 7));
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal((await reader.next()).status, 200);
      socket.end(post(`/sessions/${id}/call`, lookup));
      const last = await reader.next();
      assert.equal((JSON.parse(last.body) as { calls: number }).calls, 2);
      await reader.closed;
    });

    it("answers every pipelined request when the client half-closes right after sending them", async () => {
      const socket = await open();
      const reader = responses(socket);
      socket.write(post("/sessions", createBody));
      const id = (JSON.parse((await reader.next()).body) as { session_id: string }).session_id;
      socket.end(`GET /sessions/${id} HTTP/1.1\r\nHost: test\r\n\r\n` + post(`/sessions/${id}/call`, lookup));
      assert.equal((await reader.next()).status, 200);
      assert.equal((JSON.parse((await reader.next()).body) as { calls: number }).calls, 1);
      await reader.closed;
    });

    it("closes after answering a call sent with Connection: close", async () => {
      const socket = await open();
      const reader = responses(socket);
      socket.write(post("/sessions/nope/call", lookup, "Connection: close\r\n"));
      const reply = await reader.next();
      assert.equal(reply.status, 404);
      assert.equal(reply.headers.connection, "close");
      await reader.closed;
    });

    it("hands the connection to node:http for what it does not frame, which keeps answering on it", async () => {
      const socket = await open();
      const reader = responses(socket);
      socket.write(post("/sessions", createBody));
      const id = (JSON.parse((await reader.next()).body) as { session_id: string }).session_id;
      const chunked = `POST /sessions/${id}/call HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n${lookup.length.toString(16)}\r\n${lookup}\r\n0\r\n\r\n`;
      socket.write(chunked + post(`/sessions/${id}/call`, lookup));
      assert.equal((JSON.parse((await reader.next()).body) as { calls: number }).calls, 1);
      assert.equal((JSON.parse((await reader.next()).body) as { calls: number }).calls, 2);
      socket.destroy();
    });

    it("leaves malformed requests and oversized bodies to node:http's own answers, draining bodies it refuses", async () => {
      const garbage = await open();
      const garbageReader = responses(garbage);
      garbage.write("BREW /pot HTTP/1.1\r\nHost: test\r\n\r\n");
      assert.equal((await garbageReader.next()).status, 400);
      await garbageReader.closed;

      // A client still sending an oversized body gets its 413, and the connection serves the next request.
      for (const path of ["/sessions/x/call", "/sessions"]) {
        const large = await open();
        const largeReader = responses(large);
        large.write(`POST ${path} HTTP/1.1\r\nHost: test\r\nContent-Length: 3000000\r\n\r\n`);
        const refused = await largeReader.next();
        assert.equal(refused.status, 413, path);
        assert.equal(refused.headers.connection, "keep-alive", path);
        assert.equal((JSON.parse(refused.body) as { error: { code: string } }).error.code, "BODY_TOO_LARGE");
        for (let sent = 0; sent < 3_000_000; sent += 100_000) large.write("y".repeat(100_000));
        large.write(post("/sessions", createBody));
        assert.equal((await largeReader.next()).status, 201, `${path}: the request after the drained body`);
        large.destroy();
      }
      const endless = await open();
      const endlessReader = responses(endless);
      endless.write(`POST /sessions HTTP/1.1\r\nHost: test\r\nContent-Length: ${discardLimitBytes + 1}\r\n\r\n`);
      const closing = await endlessReader.next();
      assert.equal(closing.status, 413);
      assert.equal(closing.headers.connection, "close", "a body too long to drain closes the connection");
      await endlessReader.closed;

      const noHost = await open();
      const noHostReader = responses(noHost);
      noHost.write("POST /sessions/x/call HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
      assert.equal((await noHostReader.next()).status, 400, "node:http requires Host on HTTP/1.1");
      noHost.destroy();
    });
  });

describe("connections read into one shared buffer (adopt)", () => {
  it("reads every connection into the same buffer, writes, half-closes and closes as a socket does", async () => {
    const reads: { connection: number; text: string; buffer: Buffer }[] = [];
    const sockets: Socket[] = [];
    const ended: number[] = [];
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (accepted) => {
      const connection = sockets.length;
      const socket = adopt(accepted, (length, buffer) => {
        reads.push({ connection, text: buffer.toString("latin1", 0, length), buffer });
        socket?.write(`echo ${connection}: ${buffer.toString("latin1", 0, length)}\n`);
        return true;
      });
      assert.ok(socket, "the accepted socket was paused and gave up its handle");
      sockets.push(socket);
      socket.on("end", () => {
        ended.push(connection);
        socket.end("bye\n");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const talk = async (words: string[]): Promise<string> => {
      const client = connect(port, "127.0.0.1");
      let received = "";
      client.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
      for (const word of words) {
        client.write(word);
        // Each word its own read: wait for its echo before the next.
        while (!received.endsWith(`${word}\n`)) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      client.end();
      await new Promise((resolve) => client.on("close", resolve));
      return received;
    };
    assert.equal(await talk(["alpha", "beta"]), "echo 0: alpha\necho 0: beta\nbye\n");
    assert.equal(await talk(["gamma"]), "echo 1: gamma\nbye\n");
    assert.deepEqual(
      reads.map(({ connection, text }) => [connection, text]),
      [
        [0, "alpha"],
        [0, "beta"],
        [1, "gamma"],
      ],
    );
    assert.ok(
      reads.every((read) => read.buffer === reads[0]?.buffer),
      "one buffer for every read of every connection",
    );
    assert.deepEqual(ended, [0, 1], "a client's half-close still arrives as 'end'");
    for (const socket of sockets) socket.destroy();
    // The discarded accepted sockets no longer count as open: closing the server completes.
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  });

  it("leaves a socket that is already reading as it is", async () => {
    const server = createServer((accepted) => {
      assert.equal(
        adopt(accepted, () => true),
        undefined,
      );
      accepted.end("streamed\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = connect((server.address() as { port: number }).port, "127.0.0.1");
    let received = "";
    client.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    await new Promise((resolve) => client.on("close", resolve));
    assert.equal(received, "streamed\n");
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
