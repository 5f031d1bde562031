import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { DEFAULT_HEAD_MILLISECONDS } from "../src/server/http-connection.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";
import { runCli } from "./support/run-cli.ts";
import { createSessionRequest as create, nextFrame, openSocket, send } from "./support/server-requests.ts";

/**
 * `toolgym serve` against a hostile client on the same machine and a web page in the user's browser: one
 * test per finding of the probe behind issue 28. Loopback only; every wait is bounded.
 */
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

function closed(socket: Socket, withinMilliseconds: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve(true);
    const timer = setTimeout(() => resolve(false), withinMilliseconds);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function openRaw(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

const SECRET = "root:$6$hostile-probe-secret-line:19000:0:99999:7:::";
const deep = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("toolgym serve against a hostile client (issue 28)", () => {
  let server: RunningServer;
  let bare: RunningServer;
  let work: string;
  let dataDir: string;
  let outsideFile: string;
  let outsideMusique: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), "toolgym-hostile-"));
    dataDir = join(work, "data");
    mkdirSync(dataDir);
    outsideFile = join(work, "shadow");
    writeFileSync(outsideFile, `${SECRET}\n`);
    // A valid MuSiQue file outside the data directory, and the same inside it.
    const musique = readFileSync(new URL("../assets/multihop/musique_dev_sample.jsonl", import.meta.url));
    outsideMusique = join(work, "elsewhere.jsonl");
    writeFileSync(outsideMusique, musique);
    writeFileSync(join(dataDir, "dev.jsonl"), musique);
    writeFileSync(join(dataDir, "broken.jsonl"), `${SECRET}\n`);
    symlinkSync(outsideFile, join(dataDir, "link-out.jsonl"));
    symlinkSync("/dev/zero", join(dataDir, "zero.jsonl"));
    execFileSync("mkfifo", [join(dataDir, "pipe.jsonl")]);
    server = await startServer({
      environments: ENVIRONMENTS,
      port: 0,
      tokens: ["token-of-client-a-0123", "token-of-client-b-4567"],
      maxSessionsPerClient: 4,
      resources: { dataDirectories: [dataDir], models: { user: "http://127.0.0.1:9/v1#tiny" } },
      headMilliseconds: 600,
      requestMilliseconds: 1500,
      maxConnections: 40,
      maxHeldBytes: 8 * 1024 * 1024,
    });
    bare = await startServer({ environments: ENVIRONMENTS, port: 0 });
  });
  after(async () => {
    await server.close();
    await bare.close();
  });
  const auth = { authorization: "Bearer token-of-client-a-0123" };
  const authB = { authorization: "Bearer token-of-client-b-4567" };

  it("refuses a data file outside the data directories without quoting it (/etc/shadow)", async () => {
    const reply = await create(server.port, { env: "musique", config: { file: outsideFile } }, auth);
    assert.equal(reply.status, 403);
    assert.equal(reply.json.error?.code, "DATA_OUTSIDE");
    assert.ok(!reply.text.includes("hostile-probe-secret"), reply.text);
    const served = await create(bare.port, { env: "musique", config: { file: outsideFile } });
    assert.equal(served.status, 403, "a server without --data-dir serves no data files");
    assert.equal(served.json.error?.code, "DATA_NOT_SERVED");
  });

  it("refuses /proc/self/environ", async () => {
    const reply = await create(server.port, { env: "musique", config: { file: "/proc/self/environ" } }, auth);
    assert.equal(reply.status, 403);
    assert.ok(!/PATH=|HOME=|OPENAI/.test(reply.text), reply.text);
  });

  it("refuses a data_dir that climbs out of the data directory", async () => {
    const reply = await create(server.port, { env: "musique", config: { data_dir: "../../../../../etc" } }, auth);
    assert.equal(reply.status, 403);
    assert.equal(reply.json.error?.code, "DATA_OUTSIDE");
  });

  it("refuses a symlink inside the data directory that leads outside it", async () => {
    const reply = await create(server.port, { env: "musique", config: { file: "link-out.jsonl" } }, auth);
    assert.equal(reply.status, 403);
    assert.ok(!reply.text.includes("hostile-probe-secret"), reply.text);
  });

  it("says nothing of a malformed file's lines, even with skip_bad", async () => {
    for (const skip of [false, true]) {
      const reply = await create(server.port, { env: "musique", config: { file: join(dataDir, "broken.jsonl"), skip_bad: skip } }, auth);
      assert.equal(reply.status, 422);
      assert.ok(!reply.text.includes("hostile-probe-secret") && !reply.text.includes("root:"), reply.text);
    }
  });

  it("serves a MuSiQue file as a prompt only from inside the data directories", async () => {
    const outside = await create(server.port, { env: "musique", config: { file: outsideMusique } }, auth);
    assert.equal(outside.status, 403);
    const inside = await create(server.port, { env: "musique", config: { file: "dev.jsonl" } }, auth);
    assert.equal(inside.status, 201, inside.text);
    await send(server.port, "DELETE", `/sessions/${inside.json.session_id as string}`, { headers: auth });
  });

  it("refuses /dev/zero (directly or through a link) at once, and keeps answering", async () => {
    const started = Date.now();
    for (const [file, code] of [
      ["/dev/zero", "DATA_OUTSIDE"],
      ["zero.jsonl", "DATA_OUTSIDE"],
      ["pipe.jsonl", "DATA_NOT_FILE"],
    ]) {
      const reply = await create(server.port, { env: "musique", config: { file } }, auth);
      assert.equal(reply.json.error?.code, code, `${file}: ${reply.text}`);
      assert.ok(reply.status === 403 || reply.status === 400, reply.text);
    }
    assert.ok(Date.now() - started < 2000, "refused without reading");
    assert.equal((await send(server.port, "GET", "/health")).status, 200);
  });

  it("never sends a conversation to a model URL a client names; a model is picked by its server name", async () => {
    for (const key of ["user_model", "judge_model"]) {
      const named = await create(server.port, { env: "tau2_mock", config: { customer: "tool", [key]: "http://evil.example/v1#m" } }, auth);
      assert.equal(named.status, 400);
      assert.equal(named.json.error?.code, "MODEL_UNKNOWN");
    }
    // The judge is reached only when a reward needs it, so a session naming it opens without a model server here.
    const picked = await create(server.port, { env: "tau2_mock", config: { customer: "tool", judge_model: "user" } }, auth);
    assert.equal(picked.status, 201, picked.text);
    await send(server.port, "DELETE", `/sessions/${picked.json.session_id as string}`, { headers: auth });
  });

  it("answers 403 to a page's cross-origin text/plain POST, and opens no session", async () => {
    const before = (await send(bare.port, "GET", "/stats")).json.sessionsCreated as number;
    const reply = await send(bare.port, "POST", "/sessions", {
      body: JSON.stringify({ env: "mock" }),
      headers: { "content-type": "text/plain", origin: "http://evil.example" },
    });
    assert.equal(reply.status, 403);
    assert.equal(reply.json.error?.code, "ORIGIN_FORBIDDEN");
    assert.equal((await send(bare.port, "GET", "/stats")).json.sessionsCreated, before);
  });

  it("refuses a foreign-Origin WebSocket (no session, no replies)", async () => {
    const { outcome, socket } = await openSocket(`ws://127.0.0.1:${bare.port}/ws?env=mock`, { origin: "http://evil.example" });
    socket.terminate();
    assert.equal(outcome, 403);
  });

  it("answers 403 to a Host that is not the server's (DNS rebinding)", async () => {
    for (const path of ["/health", "/envs", "/sessions/x/call"]) {
      const reply = await send(bare.port, path.endsWith("call") ? "POST" : "GET", path, {
        headers: { host: "evil.example:8765" },
        body: path.endsWith("call") ? "{}" : undefined,
      });
      assert.equal(reply.status, 403, path);
      assert.equal(reply.json.error?.code, "HOST_FORBIDDEN");
    }
    const rebound = await openSocket(`ws://127.0.0.1:${bare.port}/ws?env=mock`, { host: "evil.example" });
    rebound.socket.terminate();
    assert.equal(rebound.outcome, 403);
    assert.equal((await send(bare.port, "GET", "/health", { headers: { host: "localhost:1" } })).status, 200, "a loopback name is the server's own");
  });

  it("closes a connection whose head trickles in past its deadline, however steadily it trickles", async () => {
    assert.ok(DEFAULT_HEAD_MILLISECONDS <= 30_000, "the default head deadline is at most 30 s");
    const socket = await openRaw(server.port);
    socket.on("error", () => undefined);
    const timer = setInterval(() => socket.write("X"), 100);
    socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    const wasClosed = await closed(socket, 4000);
    clearInterval(timer);
    socket.destroy();
    assert.ok(wasClosed, "the trickling connection was closed");
  });

  it("closes a connection whose body does not arrive within the request deadline", async () => {
    const socket = await openRaw(server.port);
    socket.on("error", () => undefined);
    socket.write(`POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer token-of-client-a-0123\r\nContent-Length: 1000\r\n\r\n{"env":`);
    const timer = setInterval(() => socket.write(" "), 100);
    const wasClosed = await closed(socket, 5000);
    clearInterval(timer);
    socket.destroy();
    assert.ok(wasClosed);
  });

  it("caps open connections and keeps serving", async () => {
    const sockets: Socket[] = [];
    for (let index = 0; index < 80; index++) {
      const socket = await openRaw(server.port);
      socket.on("error", () => undefined);
      sockets.push(socket);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = sockets.filter((socket) => socket.destroyed || socket.readableEnded).length;
    for (const socket of sockets) socket.destroy();
    assert.ok(refused >= 40, `${refused} of 80 connections closed by a cap of 40`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await send(server.port, "GET", "/health")).status, 200);
  });

  it("caps the bytes held for unfinished bodies and gives the memory back when the clients go", async () => {
    for (let round = 0; round < 3; round++) collectGarbage();
    const baseline = process.memoryUsage().arrayBuffers;
    const sockets: Socket[] = [];
    const piece = Buffer.alloc(256 * 1024, 0x20);
    for (let index = 0; index < 60; index++) {
      const socket = await openRaw(server.port);
      socket.on("error", () => undefined);
      // With the token: since issue 36 a request without one is refused before its body is read.
      socket.write(`POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer token-of-client-a-0123\r\nContent-Length: 1000000\r\n\r\n`);
      socket.write(piece);
      socket.write(piece);
      sockets.push(socket);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const dropped = sockets.filter((socket) => socket.destroyed || socket.readableEnded).length;
    assert.ok(dropped >= 30, `${dropped} of 60 half-sent 1 MB bodies (512 KiB each) refused under an 8 MiB cap`);
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let round = 0; round < 3; round++) collectGarbage();
    const left = process.memoryUsage().arrayBuffers - baseline;
    assert.ok(left < 4 * 1024 * 1024, `${Math.round(left / 1024)} KiB of buffers left after the clients went`);
  });

  it("joins a body sent in 2,000 pieces once, not once per piece", async () => {
    const body = JSON.stringify({ env: "mock", split: "train", config: { keys: 5 }, seed: 1 }).padEnd(400_000, " ");
    const original = Buffer.concat;
    let copied = 0;
    Buffer.concat = ((list: readonly Uint8Array[], length?: number) => {
      const joined = original(list, length);
      copied += joined.length;
      return joined;
    }) as typeof Buffer.concat;
    try {
      const socket = await openRaw(server.port);
      const answer = new Promise<string>((resolve) => {
        let text = "";
        socket.on("data", (chunk: Buffer) => {
          text += chunk.toString("latin1");
          if (/\r\n\r\n[\s\S]*\}$/.test(text)) resolve(text);
        });
      });
      socket.write(`POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer token-of-client-b-4567\r\nContent-Length: ${body.length}\r\n\r\n`);
      const size = Math.ceil(body.length / 2000);
      for (let offset = 0; offset < body.length; offset += size) {
        socket.write(body.slice(offset, offset + size));
        if (offset % (size * 100) === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      const text = await answer;
      socket.destroy();
      assert.match(text, /^HTTP\/1\.1 201/);
      const id = /"session_id":"([^"]+)"/.exec(text)?.[1] as string;
      await send(server.port, "DELETE", `/sessions/${id}`, { headers: authB });
    } finally {
      Buffer.concat = original;
    }
    assert.ok(copied < 3 * body.length, `${copied} bytes copied to join a ${body.length}-byte body`);
  });

  it("answers 400 to 300,000-deep JSON in any field, over HTTP and WebSocket", async () => {
    for (const field of ["seed", "index", "max_turns", "split", "config"]) {
      const reply = await send(bare.port, "POST", "/sessions", { body: `{"env":"mock","${field}":${deep(300_000)}}` });
      assert.equal(reply.status, 400, `${field}: ${reply.text.slice(0, 200)}`);
    }
    const session = await create(bare.port, { env: "mock" });
    const id = session.json.session_id as string;
    for (const field of ["seq", "arguments", "name"]) {
      const reply = await send(bare.port, "POST", `/sessions/${id}/call`, { body: `{"name":"lookup","${field}":${deep(300_000)}}` });
      assert.equal(reply.status, 400, `${field}: ${reply.text.slice(0, 200)}`);
    }
    const { socket } = await openSocket(`ws://127.0.0.1:${bare.port}/ws?env=mock`);
    const frame = nextFrame(socket);
    socket.send(`{"type":"reset","data":{"seed":${deep(300_000)}}}`);
    const answered = await frame;
    socket.close();
    assert.equal(answered.type, "error");
  });

  it("takes prototype-member argument names as ordinary (unexpected) arguments on search_plan_act", async () => {
    const session = await create(bare.port, { env: "search_plan_act" });
    const id = session.json.session_id as string;
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const reply = await send(bare.port, "POST", `/sessions/${id}/call`, { body: `{"name":"search","arguments":{"query":"x","${name}":1}}` });
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.json.is_error, true);
      assert.equal(reply.json.error_kind, "invalid_arguments", reply.text);
      assert.match(reply.json.content as string, new RegExp(`unexpected argument '${name}'`));
    }
  });

  it("keeps one client from taking every session: a quota per token", async () => {
    const ids: string[] = [];
    for (let index = 0; index < 4; index++) {
      const reply = await create(server.port, { env: "mock" }, auth);
      assert.equal(reply.status, 201);
      ids.push(reply.json.session_id as string);
    }
    const over = await create(server.port, { env: "mock" }, auth);
    assert.equal(over.status, 429);
    assert.equal(over.json.error?.code, "CLIENT_SESSIONS");
    const other = await create(server.port, { env: "mock" }, authB);
    assert.equal(other.status, 201, "another token still gets sessions");
    ids.push(other.json.session_id as string);
    for (const id of ids) await send(server.port, "DELETE", `/sessions/${id}`, { headers: id === ids.at(-1) ? authB : auth });
  });

  it("accepts the token in /ws?token= and refuses a WebSocket without it", async () => {
    const missing = await openSocket(`ws://127.0.0.1:${server.port}/ws?env=mock`);
    missing.socket.terminate();
    assert.equal(missing.outcome, 401);
    const { outcome, socket } = await openSocket(`ws://127.0.0.1:${server.port}/ws?env=mock&token=token-of-client-a-0123`);
    assert.equal(outcome, "open");
    const frame = nextFrame(socket);
    socket.send(JSON.stringify({ type: "reset", data: { split: "train" } }));
    assert.equal((await frame).type, "observation");
    socket.close();
  });

  it("takes its token from TOOLGYM_TOKEN or --token-file, not the command line, and needs one beyond loopback", async () => {
    const onCommandLine = await runCli(["serve", "--port", "0", "--token", "token-of-client-a-0123"]);
    assert.equal(onCommandLine.code, 2);
    const saved = [process.env.TOOLGYM_TOKEN, process.env.TOOLGYM_SERVER_TOKEN];
    delete process.env.TOOLGYM_TOKEN;
    delete process.env.TOOLGYM_SERVER_TOKEN;
    const wide = await runCli(["serve", "--host", "0.0.0.0", "--port", "0"]);
    if (saved[0] !== undefined) process.env.TOOLGYM_TOKEN = saved[0];
    if (saved[1] !== undefined) process.env.TOOLGYM_SERVER_TOKEN = saved[1];
    assert.equal(wide.code, 2);
    assert.match(wide.stderr, /TOKEN_REQUIRED/);
    assert.equal(wide.stderr.trim().split("\n").length, 1, "one line");
  });
});
