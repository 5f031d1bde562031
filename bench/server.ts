/**
 * `toolgym serve` under load: 1 worker, 2 workers (`--workers 2`), and the FastAPI/uvicorn peer doing the same
 * in-memory step, side by side.
 *
 *     npx tsx bench/server.ts [--sessions 64] [--seconds 8] [--warmup 2] [--no-pin] [--generator raw|node]
 *                             [--python .venv/bin/python] [--json]
 *
 * The step on every server is the `mock` env's `lookup` of the key the session's prompt asks for (a hit in a
 * small in-memory table, answered as JSON text). Each server runs as a child process on loopback. The load
 * generator (this process) keeps one keep-alive connection per session, creates the session on it and then
 * calls it back to back, as the Python adapter does (on the raw socket by default, bench/raw-http-client.ts;
 * `--generator node` uses node:http's client, which is slower than the server it measures); with several workers a connection stays with the worker
 * that accepted it, so the session is used where it lives. A last run creates every session on one
 * connection and calls from the others: about half the calls then go to another worker first (the routing
 * cost of the design). The long-lived sessions are created with a turn limit no run reaches (`max_turns`;
 * the server does not run calls past an episode's limit). A last pair of runs, 1 worker and the peer, uses
 * sessions shaped like GRPO episodes instead: each connection creates a session, makes the mock env's 6
 * calls and closes it, again and again; CPU per call then carries the creates and closes. Pinning (taskset): the server gets the first CPUs, the generator the rest; on a
 * 2-CPU machine the 2-worker server and the generator cannot be apart and the table says so. Server CPU time
 * per call (from /proc, over the server's whole process tree) is the number other load disturbs least.
 *
 * Why the tail latency is what it is (docs/benchmarks.md has the numbers): the p99 had been young-generation
 * GC. Every call's step and tool message stayed in its session for a transcript nothing reads; server
 * sessions no longer keep one (`EpisodeDriver` `transcript: false`), and scavenges fell from ~4 ms to
 * ~0.6 ms. Under GRPO-shaped load two more things made scavenges take ~3–5 ms: hidden classes made per task
 * and per episode (the mock env's random-keyed table literal, `get done()` in a literal per episode: now a
 * prototype-less table and getters on a prototype, checked by the environment contract), and the session
 * store's `Map`, whose replaced tables V8 chains together, so that a dead one in the old generation kept
 * every later session alive until it was promoted (~700 KB per scavenge; now a prototype-less dictionary:
 * ~14 KB). The runs with a p99 over 5 ms were runs where the VM ran slow (34–41 µs per call instead of 24–30).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { Agent, request } from "node:http";
import { availableParallelism, loadavg } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { printRows, row, type ComparisonRow } from "./comparison-rows.ts";
import { RawHttpConnection } from "./raw-http-client.ts";

const root = resolve(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "64" },
    seconds: { type: "string", default: "8" },
    warmup: { type: "string", default: "2" },
    pin: { type: "boolean", default: true },
    generator: { type: "string", default: "raw" },
    python: { type: "string", default: process.env.TOOLGYM_PYTHON ?? resolve(root, ".venv/bin/python") },
    json: { type: "boolean", default: false },
  },
  allowNegative: true,
});
const sessions = Number(values.sessions);
const seconds = Number(values.seconds);
const warmupSeconds = Number(values.warmup);
const cpus = availableParallelism();
if (values.generator !== "raw" && values.generator !== "node") {
  console.error(`BENCH_USAGE: --generator is raw or node, not '${values.generator}'`);
  process.exit(2);
}
const canPin = values.pin && cpus >= 2 && spawnSync("sh", ["-c", "command -v taskset"], { stdio: "ignore" }).status === 0;
const notes: string[] = [];

/** Server CPUs for a server of `processes` busy processes, the generator's CPUs, and whether they overlap. */
function placement(processes: number): { server: string; generator: string; apart: boolean } {
  const list = (from: number, to: number) => Array.from({ length: to - from }, (_, offset) => from + offset).join(",");
  if (processes < cpus) return { server: list(0, processes), generator: list(processes, cpus), apart: true };
  // Too few CPUs to keep them apart: the server gets what it needs, the generator shares the last CPU.
  return { server: list(0, Math.min(processes, cpus)), generator: String(cpus - 1), apart: false };
}

function pinSelf(cpuList: string): void {
  if (canPin) spawnSync("taskset", ["-a", "-cp", cpuList, String(process.pid)], { stdio: "ignore" });
}

function send(agent: Agent, port: number, method: string, path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const outgoing = request(
      { host: "127.0.0.1", port, path, method, agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => done({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    outgoing.on("error", fail);
    outgoing.end(body);
  });
}

/** CPU seconds used so far by a process and its children (Linux /proc, 100 Hz ticks); NaN elsewhere. */
function treeCpuSeconds(pid: number): number {
  const stat = (id: string) => readFileSync(`/proc/${id}/stat`, "utf8").split(") ")[1]!.split(" ");
  try {
    let total = 0;
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const fields = stat(entry);
        if (entry === String(pid) || fields[1] === String(pid)) total += (Number(fields[11]) + Number(fields[12])) / 100;
      } catch {
        // the process ended while the table was read
      }
    }
    return total;
  } catch {
    return NaN;
  }
}

interface Measured {
  name: string;
  perSecond: number;
  p99: number;
  errors: number;
  cpuPerCall: number;
  pinning: string;
  /** toolgym with workers: requests passed to another worker / tool calls run (from /stats). */
  routedShare?: number;
}

function getJson(port: number, path: string): Promise<Record<string, number>> {
  return new Promise((done, fail) => {
    const outgoing = request({ host: "127.0.0.1", port, path }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => done(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, number>));
    });
    outgoing.on("error", fail);
    outgoing.end();
  });
}

/** A keep-alive connection sending one request at a time: node:http's client or the raw socket. */
interface Connection {
  /** A request built once, sent each time the returned function is called. */
  request(method: string, path: string, body?: string): () => Promise<{ status: number; text: string }>;
  close(): void;
}

async function openConnection(port: number): Promise<Connection> {
  if (values.generator === "raw") {
    const raw = await RawHttpConnection.open(port);
    return {
      request(method, path, body) {
        const bytes = raw.request(method, path, body);
        return () => raw.send(bytes);
      },
      close: () => raw.close(),
    };
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    request:
      (method, path, body = "") =>
      () =>
        send(agent, port, method, path, body),
    close: () => agent.destroy(),
  };
}

/** The mock env's turn limit: an episode-shaped session makes this many calls before it is closed. */
const EPISODE_CALLS = 6;

/**
 * One session after another on `connection`, shaped like a GRPO episode: create, EPISODE_CALLS tool calls,
 * close. Every request's latency goes to `record`; returns when `stopped()` says so.
 */
async function episodes(
  connection: Connection,
  first: number,
  stopped: () => boolean,
  record: (started: number, ok: boolean, call: boolean) => void,
): Promise<void> {
  for (let index = first; !stopped(); index += sessions) {
    let started = performance.now();
    const created = await connection.request("POST", "/sessions", JSON.stringify({ env: "mock", split: "train", seed: 0, index }))();
    const json = JSON.parse(created.text) as { session_id: string; messages: { content: string }[] };
    const key = /key '([^']+)'/.exec(json.messages?.at(-1)?.content ?? "")?.[1];
    record(started, created.status === 201 && key !== undefined, false);
    const call = connection.request("POST", `/sessions/${json.session_id}/call`, JSON.stringify({ name: "lookup", arguments: { key } }));
    for (let turn = 0; turn < EPISODE_CALLS; turn++) {
      started = performance.now();
      const answer = await call();
      record(started, answer.status === 200 && answer.text.includes('"is_error":false'), true);
    }
    started = performance.now();
    const closed = await connection.request("DELETE", `/sessions/${json.session_id}`)();
    record(started, closed.status === 200, false);
  }
}

/**
 * The turn limit the bench's sessions are created with: each calls its tool back to back for the whole run
 * (a server answers calls past an episode's limit without running them; the FastAPI peer has no limit).
 */
const SESSION_TURNS = 1_000_000_000;

/** How the load uses sessions: long-lived ones called back to back (created where called, or all on one connection), or episode-shaped ones. */
type LoadShape = "calls" | "routed" | "episodes";

/**
 * Opens the connections, then runs `shape`'s load for the warm-up and the measured window. Rates and CPU
 * are per tool call (with episodes, the creates and closes are CPU the calls carry); p99 is over every request.
 */
async function load(port: number, pid: number, shape: LoadShape): Promise<Omit<Measured, "name" | "pinning">> {
  const connections = await Promise.all(Array.from({ length: sessions }, () => openConnection(port)));
  const latencies: number[] = [];
  let toolCalls = 0;
  let errors = 0;
  let measuring = false;
  let stop = false;
  const record = (started: number, ok: boolean, call: boolean) => {
    if (!measuring) return;
    if (!ok) errors++;
    if (call) toolCalls++;
    latencies.push(performance.now() - started);
  };
  let workers: Promise<void>[];
  if (shape === "episodes") workers = connections.map((connection, index) => episodes(connection, index, () => stop, record));
  else {
    const creator = await openConnection(port);
    const calls: (() => Promise<{ status: number; text: string }>)[] = [];
    for (let index = 0; index < sessions; index++) {
      const body = JSON.stringify({ env: "mock", split: "train", seed: 0, index, max_turns: SESSION_TURNS });
      const created = await (shape === "routed" ? creator : connections[index]!).request("POST", "/sessions", body)();
      const json = JSON.parse(created.text) as { session_id: string; messages: { content: string }[] };
      const key = /key '([^']+)'/.exec(json.messages?.at(-1)?.content ?? "")?.[1];
      if (created.status !== 201 || !key) throw new Error(`could not create session ${index}: ${created.text.slice(0, 200)}`);
      calls.push(connections[index]!.request("POST", `/sessions/${json.session_id}/call`, JSON.stringify({ name: "lookup", arguments: { key } })));
    }
    creator.close();
    workers = calls.map(async (call) => {
      while (!stop) {
        const started = performance.now();
        const response = await call();
        record(started, response.status === 200 && response.text.includes('"is_error":false'), true);
      }
    });
  }
  await new Promise((done) => setTimeout(done, warmupSeconds * 1000));
  measuring = true;
  const windowStart = performance.now();
  const cpuStart = treeCpuSeconds(pid);
  await new Promise((done) => setTimeout(done, seconds * 1000));
  const cpuUsed = treeCpuSeconds(pid) - cpuStart;
  measuring = false;
  const windowSeconds = (performance.now() - windowStart) / 1000;
  stop = true;
  await Promise.all(workers);
  for (const connection of connections) connection.close();
  latencies.sort((a, b) => a - b);
  const p99 = latencies[Math.min(latencies.length - 1, Math.floor(0.99 * latencies.length))] ?? NaN;
  return { perSecond: toolCalls / windowSeconds, p99, errors, cpuPerCall: (cpuUsed / toolCalls) * 1e6 };
}

/**
 * Waits until the server answers and `started()` says it has started: `toolgym serve --workers N` prints
 * that it listens once every worker does, while the first worker answers before the others are up (and
 * would then take every connection of the run).
 */
async function waitForServer(port: number, child: ChildProcess, started: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 1200; attempt++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    if (!started()) {
      await new Promise((done) => setTimeout(done, 100));
      continue;
    }
    const ready = await new Promise<boolean>((done) => {
      const probe = request({ host: "127.0.0.1", port, path: "/health" }, (response) => done(response.resume() !== undefined));
      probe.on("error", () => done(false));
      probe.end();
    });
    if (ready) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`no server on port ${port} after 120 s`);
}

async function measure(name: string, command: string[], port: number, processes: number, shape: LoadShape = "calls"): Promise<Measured> {
  const place = placement(processes);
  const argv = canPin ? ["taskset", "-c", place.server, ...command] : command;
  const child = spawn(argv[0]!, argv.slice(1), { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const isToolgym = command.includes("serve");
  try {
    pinSelf(place.generator);
    await waitForServer(port, child, () => !isToolgym || output.includes("listening on"));
    const measured = await load(port, child.pid as number, shape);
    const stats = processes > 1 ? await getJson(port, "/stats") : undefined;
    const routedShare = stats ? (stats.routed_requests ?? NaN) / (stats.toolCalls ?? NaN) : undefined;
    const pinning = canPin ? `server CPU ${place.server}, generator CPU ${place.generator}${place.apart ? "" : " (shared: too few CPUs)"}` : "none";
    return { name, ...measured, pinning, routedShare };
  } finally {
    child.kill("SIGTERM");
    await new Promise((done) => (child.exitCode !== null ? done(null) : child.once("exit", done)));
  }
}

let nextPort = 20_000 + Math.floor(Math.random() * 20_000);
function toolgym(name: string, workers: number, shape: LoadShape = "calls"): Promise<Measured> {
  const port = ++nextPort;
  const command = [process.execPath, resolve(root, "bin/toolgym.js"), "serve", "--port", String(port), "--max-sessions", "4096", "--workers", String(workers)];
  return measure(name, command, port, workers, shape);
}
const loadBefore = loadavg()[0] as number;
const one = await toolgym("toolgym, 1 worker", 1);
const two = await toolgym("toolgym, 2 workers", 2);
const routed = await toolgym("toolgym, 2 workers, half the calls routed", 2, "routed");
const episodic = await toolgym(`toolgym, 1 worker, episodes (create, ${EPISODE_CALLS} calls, close)`, 1, "episodes");
let peer: Measured | undefined;
let peerEpisodic: Measured | undefined;
if (existsSync(values.python as string)) {
  const peerCommand = (port: number) => [values.python as string, resolve(root, "python/bench/fastapi_server.py"), String(port)];
  let port = ++nextPort;
  peer = await measure("FastAPI + uvicorn", peerCommand(port), port, 1);
  port = ++nextPort;
  peerEpisodic = await measure(`FastAPI + uvicorn, episodes (create, ${EPISODE_CALLS} calls, close)`, peerCommand(port), port, 1, "episodes");
  const implementation =
    spawnSync(values.python as string, ["-c", "import uvloop, httptools"], { stdio: "ignore" }).status === 0 ? "uvloop + httptools" : "asyncio + h11";
  peer.name += ` (${implementation})`;
  peerEpisodic.name += ` (${implementation})`;
  if (implementation === "asyncio + h11")
    notes.push("uvicorn ran on asyncio + h11 (uvloop/httptools are not installed in this Python); `pip install uvicorn[standard]` gives the faster baseline");
} else notes.push(`FastAPI peer skipped: no Python at ${values.python} (run scripts/setup-python.sh)`);
const loadAfter = loadavg()[0] as number;

const perCpuSecond = (measured: Measured) => 1e6 / measured.cpuPerCall;
const rows: ComparisonRow[] = [
  row({
    name: "calls/s, 1 worker",
    unit: "calls/s",
    toolgym: one.perSecond,
    reference: peer?.perSecond ?? null,
    target: "context (machine load moves it)",
    pass: null,
  }),
  row({
    name: "calls per server CPU-second, 1 worker",
    unit: "calls/CPU-s",
    toolgym: perCpuSecond(one),
    reference: peer ? perCpuSecond(peer) : null,
    target: "ratio ≥ 5 (vs FastAPI)",
    pass: peer ? perCpuSecond(one) / perCpuSecond(peer) >= 5 : null,
  }),
  row({ name: `p99 at ${sessions} sessions, 1 worker`, unit: "ms", toolgym: one.p99, reference: peer?.p99 ?? null, target: "≤ 5 ms", pass: one.p99 <= 5 }),
  row({ name: "calls/s, 2 workers (vs 1 worker)", unit: "calls/s", toolgym: two.perSecond, reference: one.perSecond, target: "context: scaling", pass: null }),
  row({
    name: "calls per CPU-second, 2 workers (vs 1)",
    unit: "calls/CPU-s",
    toolgym: perCpuSecond(two),
    reference: perCpuSecond(one),
    target: "context",
    pass: null,
  }),
  row({ name: `p99 at ${sessions} sessions, 2 workers`, unit: "ms", toolgym: two.p99, reference: one.p99, target: "context", pass: null }),
  row({
    name: "share of calls routed to another worker, 2 workers",
    unit: "share",
    toolgym: two.routedShare ?? NaN,
    reference: routed.routedShare ?? null,
    target: "0 when a session is used on the connection that created it",
    pass: two.routedShare === 0,
  }),
  row({
    name: "calls/s, 2 workers, half routed (vs same-worker)",
    unit: "calls/s",
    toolgym: routed.perSecond,
    reference: two.perSecond,
    target: "context: routing cost",
    pass: null,
  }),
  row({
    name: `calls per server CPU-second, 1 worker, episodes (create + close included)`,
    unit: "calls/CPU-s",
    toolgym: perCpuSecond(episodic),
    reference: peerEpisodic ? perCpuSecond(peerEpisodic) : null,
    target: "context: GRPO-shaped sessions (vs FastAPI)",
    pass: null,
  }),
  row({
    name: `p99 per request at ${sessions} sessions, 1 worker, episodes`,
    unit: "ms",
    toolgym: episodic.p99,
    reference: peerEpisodic?.p99 ?? null,
    target: "context",
    pass: null,
  }),
  row({
    name: "failed requests (all runs)",
    unit: "requests",
    toolgym: one.errors + two.errors + routed.errors + episodic.errors,
    reference: null,
    target: "0",
    pass: one.errors + two.errors + routed.errors + episodic.errors === 0,
  }),
];
if (Math.max(loadBefore, loadAfter) > cpus + 0.5)
  notes.push(
    `the machine was shared (1-min load ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after, on ${cpus} CPUs): calls/s and p99 are disturbed; CPU per call much less`,
  );
printRows(rows, [
  `${sessions} sessions, one keep-alive connection each (${values.generator === "raw" ? "raw-socket" : "node:http"} generator), ${seconds} s window after ${warmupSeconds} s warm-up; step: mock 'lookup'; ${cpus} CPUs`,
  ...[one, two, routed, episodic, ...(peer ? [peer] : []), ...(peerEpisodic ? [peerEpisodic] : [])].map(
    (measured) =>
      `  ${measured.name}: ${measured.perSecond.toFixed(0)} calls/s, p99 ${measured.p99.toFixed(2)} ms, ${measured.cpuPerCall.toFixed(0)} µs server CPU/call${measured.routedShare === undefined ? "" : `, ${(measured.routedShare * 100).toFixed(0)}% of calls routed`}; pinning: ${measured.pinning}`,
  ),
  ...notes.map((note) => `note: ${note}`),
  "",
]);
