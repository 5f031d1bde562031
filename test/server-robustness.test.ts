import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import WebSocket from "ws";
import { createRandom, type Random } from "../src/core/index.ts";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { startServerCluster, type RunningCluster } from "../src/server/cluster.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) collectGarbage();
  return process.memoryUsage().heapUsed;
}

type Planned = { method: string; path: string; body?: string; kind: string };

const junkValues: unknown[] = [null, 0, -1, 1.5, 1e308, "", "x", [], {}, [1, "a"], { nested: { deep: [null] } }, true, "💥".repeat(20)];

/** One random request: mostly malformed, with enough valid traffic to keep sessions alive and closing. */
function planRequest(random: Random, sessions: string[]): Planned {
  const session = () => (sessions.length > 0 && random.chance(0.8) ? random.pick(sessions) : random.pick(["nope", "", "../../etc", "%00", "a".repeat(300)]));
  const junk = () => random.pick(junkValues);
  switch (random.integer(0, 11)) {
    case 0:
      return {
        method: "POST",
        path: "/sessions",
        body: JSON.stringify({ env: "mock", split: random.pick(["train", "eval"]), seed: random.integer(0, 9), index: random.integer(0, 99) }),
        kind: "create",
      };
    case 1:
      return {
        method: "POST",
        path: "/sessions",
        body: JSON.stringify({ env: junk(), split: junk(), seed: junk(), index: junk(), config: junk() }),
        kind: "bad-create",
      };
    case 2:
      return {
        method: "POST",
        path: `/sessions/${encodeURIComponent(session())}/call`,
        body: JSON.stringify({
          name: random.pick(["lookup", "finish", "rm", junk()]),
          arguments: random.chance(0.5) ? { key: junk(), answer: junk() } : junk(),
        }),
        kind: "call",
      };
    case 3:
      return {
        method: "POST",
        path: `/sessions/${encodeURIComponent(session())}/call`,
        body: random.pick(["{", "nul", "[1,", '{"name":', "\u0000\u0001", "{}}", '"just a string"']),
        kind: "bad-json",
      };
    case 4:
      return { method: "DELETE", path: `/sessions/${encodeURIComponent(session())}`, kind: "close" };
    case 5:
      return {
        method: "GET",
        path: `/sessions/${encodeURIComponent(session())}/reward${random.chance(0.3) ? "?ended_by=" + random.pick(["finished", "bogus", ""]) : ""}`,
        kind: "reward",
      };
    case 6:
      return { method: "POST", path: `/sessions/${encodeURIComponent(session())}/reward`, body: JSON.stringify({ ended_by: junk() }), kind: "reward-post" };
    case 7: {
      const method = random.pick(["PUT", "PATCH", "GET", "POST", "DELETE"]);
      return {
        method,
        path: random.pick(["/", "/sessions", "/envs/%ff", "/envs/mock/extra", "/stats/x", "/sessions//call"]),
        body: method !== "GET" && random.chance(0.5) ? "{}" : undefined,
        kind: "odd-route",
      };
    }
    case 8:
      if (random.chance(0.85)) return { method: "GET", path: "/health", kind: "read" };
      return { method: "POST", path: "/sessions", body: `{"env":"mock","pad":"${"y".repeat(random.integer(11, 30) * 100_000)}"}`, kind: "huge" };
    case 9:
      return { method: "GET", path: random.pick(["/health", "/envs", "/envs/mock", "/stats"]), kind: "read" };
    case 10:
      return {
        method: "POST",
        path: `/sessions/${encodeURIComponent(session())}/call`,
        body: JSON.stringify({ name: "lookup", arguments: { key: "x".repeat(random.integer(0, 5000)) } }),
        kind: "long-arg",
      };
    default:
      return { method: "GET", path: `/sessions/${encodeURIComponent(session())}`, kind: "describe" };
  }
}

/** The server under test: its URL, how many sessions it holds, and (in-process only) its heap after a GC. */
interface Target {
  url: string;
  openSessions(): Promise<number>;
  heap?: () => number;
}

/** 10,000 random requests, 32 at a time; checks statuses, error bodies, session bookkeeping and memory. */
async function hammer(target: Target, seed: number): Promise<Map<number, number>> {
  const server = target;
  {
    const random = createRandom("server-robustness", seed);
    const sessions: string[] = [];
    const statuses = new Map<number, number>();
    const send = async (planned: Planned) => {
      const huge = planned.kind === "huge";
      let response: Response;
      try {
        response = await fetch(`${server.url}${planned.path}`, { method: planned.method, body: planned.body, headers: { "content-type": "application/json" } });
      } catch (error) {
        throw new Error(`${planned.kind} ${planned.method} ${planned.path.slice(0, 60)} ${planned.body?.length}: ${String((error as Error).cause)}`);
      }
      const text = await response.text();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      assert.ok(response.status < 500, `${planned.kind} ${planned.method} ${planned.path.slice(0, 60)} → ${response.status} ${text.slice(0, 200)}`);
      const json = JSON.parse(text);
      if (response.status >= 400) assert.equal(typeof json.error?.code, "string", `${planned.kind}: error without a code: ${text.slice(0, 120)}`);
      if (huge) assert.equal(response.status, 413);
      if (planned.kind === "create" && response.status === 201) sessions.push(json.session_id);
      if (planned.kind === "close" && response.status === 200) sessions.splice(sessions.indexOf(planned.path.split("/")[2] as string), 1);
    };
    // Warm up code paths (JIT, caches), then take the memory baseline with no sessions open.
    for (let i = 0; i < 200; i++) await send(planRequest(random, sessions));
    for (const id of sessions.splice(0)) await fetch(`${server.url}/sessions/${id}`, { method: "DELETE" });
    const baseline = target.heap?.() ?? 0;

    let sent = 200;
    const workers = Array.from({ length: 32 }, async () => {
      while (sent < 10_000) {
        sent++;
        const planned = planRequest(random, sessions);
        if (planned.kind === "close" && random.chance(0.5)) await Promise.all([send(planned), send({ ...planned })]);
        else await send(planned);
      }
    });
    await Promise.all(workers);
    assert.ok((statuses.get(201) ?? 0) > 300, "enough sessions were created to exercise the store");
    assert.ok((statuses.get(400) ?? 0) > 1000 && (statuses.get(404) ?? 0) > 500 && (statuses.get(413) ?? 0) > 40, JSON.stringify([...statuses]));

    const stats = (await (await fetch(`${server.url}/stats`)).json()) as { open_sessions: number; toolCalls: number };
    assert.equal(stats.open_sessions, sessions.length);
    assert.ok(stats.toolCalls > 500);
    await Promise.all(sessions.splice(0).map((id) => fetch(`${server.url}/sessions/${id}`, { method: "DELETE" }).then((response) => response.text())));
    assert.equal(await target.openSessions(), 0);
    if (target.heap) {
      const afterwards = target.heap();
      assert.ok(afterwards - baseline < 8 * 1024 * 1024, `heap grew by ${((afterwards - baseline) / 1e6).toFixed(1)} MB after every session closed`);
    }
    assert.equal((await fetch(`${server.url}/health`)).status, 200, "the server is still up");
    return statuses;
  }
}

describe("server robustness with --workers 2 (sessions routed between two worker processes)", () => {
  let cluster: RunningCluster;
  before(async () => {
    cluster = await startServerCluster({ workers: 2, host: "127.0.0.1", port: 0, maxSessions: 4000, idleSeconds: 600 });
  });
  after(async () => {
    await cluster.close();
  });

  it("10,000 random and malformed requests: no 5xx, JSON errors, every session closed, /stats summed over both workers", async () => {
    const openSessions = async () => ((await (await fetch(`${cluster.url}/stats`)).json()) as { open_sessions: number }).open_sessions;
    const statuses = await hammer({ url: cluster.url, openSessions }, 2);
    const stats = (await (await fetch(`${cluster.url}/stats`)).json()) as Record<string, number>;
    assert.equal(stats.workers, 2);
    assert.equal(stats.sessionsCreated, statuses.get(201), "every created session counted once, whichever worker holds it");
    // Both workers held sessions: ids carry the worker, and connections are spread over the workers.
    const held = await Promise.all(
      Array.from(
        { length: 8 },
        async () =>
          (
            (await (await fetch(`${cluster.url}/sessions`, { method: "POST", body: '{"env":"mock"}', headers: { connection: "close" } })).json()) as {
              session_id: string;
            }
          ).session_id,
      ),
    );
    assert.deepEqual(new Set(held.map((id) => id.slice(0, 3))), new Set(["w0-", "w1-"]));
  });
});

describe("server robustness on a real loopback server", () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ environments: ENVIRONMENTS, port: 0, maxSessions: 4000 });
  });
  after(async () => {
    await server.close();
  });

  it("10,000 random and malformed requests: no 5xx, JSON errors, sessions and memory back to baseline", async () => {
    await hammer({ url: server.url, openSessions: async () => server.store.size, heap: heapAfterGc }, 1);
  });

  it("OpenEnv clients over /ws: an episode, malformed frames and closes", async () => {
    const open = (path: string) =>
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      new Promise<{ socket: WebSocket; next: () => Promise<Record<string, any>> }>((resolve, reject) => {
        const socket = new WebSocket(`${server.url.replace("http", "ws")}${path}`);
        const queue: string[] = [];
        const waiting: ((text: string) => void)[] = [];
        socket.on("message", (data) => {
          const text = data.toString();
          const waiter = waiting.shift();
          if (waiter) waiter(text);
          else queue.push(text);
        });
        socket.once("open", () =>
          resolve({
            socket,
            next: () => new Promise((done) => (queue.length > 0 ? done(JSON.parse(queue.shift() as string)) : waiting.push((text) => done(JSON.parse(text))))),
          }),
        );
        socket.once("error", reject);
      });
    const { socket, next } = await open("/ws?env=mock");
    socket.send(JSON.stringify({ type: "reset", data: { split: "train", seed: 5, index: 0 } }));
    const reset = await next();
    assert.equal(reset.type, "observation");
    const key = /key '(\w+)'/.exec(reset.data.observation.messages[1].content)?.[1];
    socket.send(JSON.stringify({ type: "mcp", data: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "lookup", arguments: { key } } } }));
    const looked = await next();
    assert.equal(looked.data.id, 7);
    const value = JSON.parse(looked.data.result.content[0].text).value;
    for (const junk of ["{", "[]", '{"type": 5}', '{"type":"step","data":[]}', '{"type":"step","data":{"type":"call_tool","tool_name":{}}}']) {
      socket.send(junk);
      assert.equal((await next()).type, "error", junk);
    }
    socket.send(JSON.stringify({ type: "step", data: { type: "call_tool", tool_name: "finish", arguments: { answer: value } } }));
    const finished = await next();
    assert.equal(finished.data.done, true);
    assert.equal(finished.data.reward, 1);
    const before = server.store.size;
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.send(JSON.stringify({ type: "close" }));
    await closed;
    assert.equal(server.store.size, before - 1);

    const dropped = await open("/ws?env=mock");
    dropped.socket.send(JSON.stringify({ type: "reset", data: {} }));
    await dropped.next();
    const count = server.store.size;
    dropped.socket.terminate();
    for (let i = 0; i < 50 && server.store.size === count; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(server.store.size, count - 1, "a dropped socket closes its session");
  });
});
