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
 * cost of the design). Pinning (taskset): the server gets the first CPUs, the generator the rest; on a
 * 2-CPU machine the 2-worker server and the generator cannot be apart and the table says so. Server CPU time
 * per call (from /proc, over the server's whole process tree) is the number other load disturbs least.
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

function post(agent: Agent, port: number, path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const outgoing = request(
      { host: "127.0.0.1", port, path, method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
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

/** A keep-alive connection sending one POST at a time: node:http's client or the raw socket. */
interface Connection {
  post(path: string, body: string): () => Promise<{ status: number; text: string }>;
  close(): void;
}

async function openConnection(port: number): Promise<Connection> {
  if (values.generator === "raw") {
    const raw = await RawHttpConnection.open(port);
    return {
      post(path, body) {
        const bytes = raw.post(path, body);
        return () => raw.send(bytes);
      },
      close: () => raw.close(),
    };
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return { post: (path, body) => () => post(agent, port, path, body), close: () => agent.destroy() };
}

/**
 * The turn limit the bench's sessions are created with: each calls its tool back to back for the whole run
 * (a server answers calls past an episode's limit without running them; the FastAPI peer has no limit).
 */
const SESSION_TURNS = 1_000_000_000;

/** Creates the sessions, then calls them back to back for the warm-up and the measured window. */
async function load(port: number, pid: number, routed: boolean): Promise<Omit<Measured, "name" | "pinning">> {
  const connections = await Promise.all(Array.from({ length: sessions }, () => openConnection(port)));
  const creator = await openConnection(port);
  const calls: (() => Promise<{ status: number; text: string }>)[] = [];
  for (let index = 0; index < sessions; index++) {
    const created = await (routed ? creator : connections[index]!).post(
      "/sessions",
      JSON.stringify({ env: "mock", split: "train", seed: 0, index, max_turns: SESSION_TURNS }),
    )();
    const json = JSON.parse(created.text) as { session_id: string; messages: { content: string }[] };
    const key = /key '([^']+)'/.exec(json.messages?.at(-1)?.content ?? "")?.[1];
    if (created.status !== 201 || !key) throw new Error(`could not create session ${index}: ${created.text.slice(0, 200)}`);
    calls.push(connections[index]!.post(`/sessions/${json.session_id}/call`, JSON.stringify({ name: "lookup", arguments: { key } })));
  }
  creator.close();
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  let stop = false;
  const workers = calls.map(async (call) => {
    while (!stop) {
      const started = performance.now();
      const response = await call();
      if (!measuring) continue;
      if (response.status !== 200 || !response.text.includes('"is_error":false')) errors++;
      latencies.push(performance.now() - started);
    }
  });
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
  return { perSecond: latencies.length / windowSeconds, p99, errors, cpuPerCall: (cpuUsed / latencies.length) * 1e6 };
}

async function waitForServer(port: number, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 1200; attempt++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
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

async function measure(name: string, command: string[], port: number, processes: number, routed = false): Promise<Measured> {
  const place = placement(processes);
  const argv = canPin ? ["taskset", "-c", place.server, ...command] : command;
  const child = spawn(argv[0]!, argv.slice(1), { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  child.stdout!.resume();
  try {
    pinSelf(place.generator);
    await waitForServer(port, child);
    const measured = await load(port, child.pid as number, routed);
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
function toolgym(name: string, workers: number, routed = false): Promise<Measured> {
  const port = ++nextPort;
  const command = [process.execPath, resolve(root, "bin/toolgym.js"), "serve", "--port", String(port), "--max-sessions", "4096", "--workers", String(workers)];
  return measure(name, command, port, workers, routed);
}
const loadBefore = loadavg()[0] as number;
const one = await toolgym("toolgym, 1 worker", 1);
const two = await toolgym("toolgym, 2 workers", 2);
const routed = await toolgym("toolgym, 2 workers, half the calls routed", 2, true);
let peer: Measured | undefined;
if (existsSync(values.python as string)) {
  const port = ++nextPort;
  peer = await measure("FastAPI + uvicorn", [values.python as string, resolve(root, "python/bench/fastapi_server.py"), String(port)], port, 1);
  const implementation =
    spawnSync(values.python as string, ["-c", "import uvloop, httptools"], { stdio: "ignore" }).status === 0 ? "uvloop + httptools" : "asyncio + h11";
  peer.name += ` (${implementation})`;
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
    name: "failed calls (all runs)",
    unit: "calls",
    toolgym: one.errors + two.errors + routed.errors,
    reference: null,
    target: "0",
    pass: one.errors + two.errors + routed.errors === 0,
  }),
];
if (Math.max(loadBefore, loadAfter) > cpus + 0.5)
  notes.push(
    `the machine was shared (1-min load ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after, on ${cpus} CPUs): calls/s and p99 are disturbed; CPU per call much less`,
  );
printRows(rows, [
  `${sessions} sessions, one keep-alive connection each (${values.generator === "raw" ? "raw-socket" : "node:http"} generator), ${seconds} s window after ${warmupSeconds} s warm-up; step: mock 'lookup'; ${cpus} CPUs`,
  ...[one, two, routed, ...(peer ? [peer] : [])].map(
    (measured) =>
      `  ${measured.name}: ${measured.perSecond.toFixed(0)} calls/s, p99 ${measured.p99.toFixed(2)} ms, ${measured.cpuPerCall.toFixed(0)} µs server CPU/call${measured.routedShare === undefined ? "" : `, ${(measured.routedShare * 100).toFixed(0)}% of calls routed`}; pinning: ${measured.pinning}`,
  ),
  ...notes.map((note) => `note: ${note}`),
  "",
]);
