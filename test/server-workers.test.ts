import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { after, before, describe, it } from "node:test";
import { startServerCluster, type RunningCluster } from "../src/server/cluster.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const token = "w0rkers";

describe("toolgym serve --workers 2", () => {
  let cluster: RunningCluster;
  const restarts: number[] = [];
  before(async () => {
    cluster = await startServerCluster({
      workers: 2,
      host: "127.0.0.1",
      port: 0,
      token,
      maxSessions: 100,
      idleSeconds: 600,
      onWorkerRestart: (index) => restarts.push(index),
    });
  });
  after(async () => {
    await cluster.close();
  });

  /** One request; `agent` keeps a connection (hence a worker), without one every request opens a new connection. */
  function send(method: string, path: string, body?: unknown, options: { agent?: Agent; auth?: string } = {}): Promise<{ status: number; json: Json }> {
    return new Promise((done, fail) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string> = { authorization: `Bearer ${options.auth ?? token}`, "content-type": "application/json" };
      const outgoing = request({ host: "127.0.0.1", port: cluster.port, method, path, headers, agent: options.agent ?? false }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => done({ status: response.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
      });
      outgoing.on("error", fail);
      outgoing.end(text);
    });
  }
  const stats = async () => (await send("GET", "/stats")).json;

  it("a session created and called on one connection stays in its worker: nothing is routed", async () => {
    const agents = Array.from({ length: 8 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    const ids = await Promise.all(
      agents.map(async (agent, index) => {
        const created = await send("POST", "/sessions", { env: "mock", seed: 1, index }, { agent });
        assert.equal(created.status, 201);
        for (let seq = 1; seq <= 5; seq++)
          assert.equal(
            (await send("POST", `/sessions/${created.json.session_id}/call`, { name: "lookup", arguments: { key: "x" }, seq }, { agent })).json.calls,
            seq,
          );
        return created.json.session_id as string;
      }),
    );
    for (const agent of agents) agent.destroy();
    assert.deepEqual(new Set(ids.map((id) => id.slice(0, 3))), new Set(["w0-", "w1-"]), "connections were spread over both workers");
    const counted = await stats();
    assert.equal(counted.workers, 2);
    assert.equal(counted.sessionsCreated, 8);
    assert.equal(counted.toolCalls, 40);
    assert.equal(counted.routed_requests, 0);
  });

  it("requests on other connections reach the session's worker, with its answers and its token check", async () => {
    const created = await send("POST", "/sessions", { env: "mock", seed: 2, index: 0 });
    const id = created.json.session_id as string;
    const before = await stats();
    for (let seq = 1; seq <= 12; seq++) {
      const called = await send("POST", `/sessions/${id}/call`, { name: "lookup", arguments: { key: "x" }, seq });
      assert.equal(called.status, 200);
      assert.equal(called.json.calls, seq);
    }
    const again = await send("POST", `/sessions/${id}/call`, { name: "lookup", arguments: { key: "x" }, seq: 12 });
    assert.equal(again.json.calls, 12, "a repeated number is answered from the record, on whichever worker it lands");
    const after = await stats();
    assert.equal(after.toolCalls - before.toolCalls, 12);
    assert.equal(after.repeatedCalls - before.repeatedCalls, 1);
    assert.ok(after.routed_requests > 0, "new connections land on both workers, so some requests were passed on");
    assert.equal((await send("GET", `/sessions/${id}`)).json.calls, 12);
    const refused = await Promise.all(Array.from({ length: 6 }, () => send("POST", `/sessions/${id}/call`, { name: "lookup", seq: 13 }, { auth: "wrong" })));
    for (const reply of refused) assert.deepEqual([reply.status, reply.json.error.code], [401, "UNAUTHORIZED"]);
    assert.equal((await send("GET", "/stats", undefined, { auth: "wrong" })).status, 401);
  });

  it("a worker that dies is replaced; its sessions answer 404 SESSION_UNKNOWN, new sessions work", async () => {
    const owned: string[] = [];
    while (owned.length === 0) {
      const created = await send("POST", "/sessions", { env: "mock" });
      if ((created.json.session_id as string).startsWith("w1-")) owned.push(created.json.session_id);
    }
    const [, pid] = cluster.pids();
    process.kill(pid as number, "SIGKILL");
    let reply: { status: number; json: Json } = { status: 0, json: {} };
    for (let attempt = 0; attempt < 200 && reply.status !== 404; attempt++) {
      reply = await send("GET", `/sessions/${owned[0]}`);
      assert.ok(reply.status === 404 || reply.status === 503, `${reply.status} ${JSON.stringify(reply.json)}`);
      if (reply.status === 503) assert.equal(reply.json.error.code, "WORKER_UNAVAILABLE");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(reply.json.error.code, "SESSION_UNKNOWN");
    assert.deepEqual(restarts, [1]);
    assert.notEqual(cluster.pids()[1], pid);
    const fresh = await Promise.all(Array.from({ length: 6 }, () => send("POST", "/sessions", { env: "mock" })));
    for (const created of fresh) assert.equal(created.status, 201);
  });
});
