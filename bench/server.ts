/**
 * Load test of `toolgym serve` against a minimal FastAPI/uvicorn server doing the same in-memory step.
 *
 *     npx tsx bench/server.ts [--sessions 64] [--seconds 8] [--warmup 2] [--generator auto|wrk|node]
 *                             [--wrk-threads 1] [--no-pin] [--python .venv/bin/python]
 *
 * The step on both sides is the `mock` env's `lookup` of the key the session's prompt asks for (a hit in
 * a small in-memory table, answered as JSON text). Each server runs as a child process on loopback; the
 * sessions are created first, then every request is `POST /sessions/:id/call`.
 *
 * Load generator: `wrk` (compiled, so it does not eat the server's CPU) when it is on PATH, else a Node
 * generator in this process (with a note: it competes with the server for the 2 cores). wrk keeps 64
 * connections busy with calls spread over the 64 sessions (see `wrkScript`). Where `taskset` exists and
 * there are ≥ 2 CPUs, the server is pinned to CPU 0 and the generator to CPU 1. Besides calls/s and
 * latency, the table gives each server's CPU time per call (from /proc), which the machine's other load
 * disturbs much less than throughput and p99 do. The FastAPI row says whether uvicorn ran on uvloop +
 * httptools (`pip install uvloop httptools`, the faster setup) or on asyncio + h11.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { createServer } from "node:net";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const root = resolve(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "64" },
    seconds: { type: "string", default: "8" },
    warmup: { type: "string", default: "2" },
    generator: { type: "string", default: "auto" },
    "wrk-threads": { type: "string", default: "1" },
    pin: { type: "boolean", default: true },
    python: { type: "string", default: process.env.TOOLGYM_PYTHON ?? resolve(root, ".venv/bin/python") },
  },
  allowNegative: true,
});
const sessions = Number(values.sessions);
const seconds = Number(values.seconds);
const warmupSeconds = Number(values.warmup);
const wrkThreads = Number(values["wrk-threads"]);
if (!Number.isInteger(wrkThreads) || wrkThreads < 1 || wrkThreads > sessions) throw new Error(`--wrk-threads must be 1..${sessions}`);
const targetRatio = 5;
const targetP99 = 5;

function onPath(command: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}
const hasWrk = onPath("wrk");
const generator = values.generator === "auto" ? (hasWrk ? "wrk" : "node") : (values.generator as string);
if (generator === "wrk" && !hasWrk) throw new Error("--generator wrk: wrk is not on PATH (Debian/Ubuntu: apt-get install -y wrk)");
const pinned = values.pin && onPath("taskset") && availableParallelism() >= 2;
const pin = (cpu: number, command: string, args: string[]): [string, string[]] =>
  pinned ? ["taskset", ["-c", String(cpu), command, ...args]] : [command, args];

function freePort(): Promise<number> {
  return new Promise((done) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => done(port));
    });
  });
}

function post(agent: Agent, port: number, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((done, fail) => {
    const data = JSON.stringify(body);
    const outgoing = request(
      { host: "127.0.0.1", port, path, method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(data) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => done({ status: response.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
      },
    );
    outgoing.on("error", fail);
    outgoing.end(data);
  });
}

async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    const ready = await new Promise<boolean>((done) => {
      const probe = request({ host: "127.0.0.1", port, path: "/health", method: "GET" }, (response) => {
        response.resume();
        done(true);
      });
      probe.on("error", () => done(false));
      probe.end();
    });
    if (ready) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`no server on port ${port} after 30 s`);
}

interface Result {
  server: string;
  calls: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
  load: number[];
  /** Server CPU time (user + system, all threads) per call in µs; NaN where /proc is missing. */
  cpuPerCall: number;
}

/** CPU seconds a process has used so far (Linux /proc; clock ticks at the usual 100 Hz), NaN elsewhere. */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

interface Call {
  path: string;
  body: string;
}

/** Creates the sessions (not measured) and returns each one's tool call: a lookup of the key its prompt asks for. */
async function createSessions(port: number): Promise<Call[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const calls: Call[] = [];
  for (let index = 0; index < sessions; index++) {
    const created = await post(agent, port, "/sessions", { env: "mock", split: "train", seed: 0, index });
    const messages = created.json.messages as { role: string; content: string }[];
    const key = /key '([^']+)'/.exec(messages.at(-1)?.content ?? "")?.[1];
    if (created.status !== 201 || !key) throw new Error(`could not create session ${index}: ${JSON.stringify(created.json).slice(0, 200)}`);
    calls.push({ path: `/sessions/${created.json.session_id as string}/call`, body: JSON.stringify({ name: "lookup", arguments: { key } }) });
  }
  const check = await post(agent, port, calls[0]!.path, JSON.parse(calls[0]!.body));
  if (check.status !== 200 || check.json.is_error !== false) throw new Error(`lookup did not hit: ${JSON.stringify(check.json).slice(0, 200)}`);
  agent.destroy();
  return calls;
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? NaN;
}

/** The Node generator: one keep-alive connection per session, each calling back to back. */
async function loadWithNode(port: number, calls: Call[], pid?: number): Promise<Omit<Result, "server" | "load">> {
  const agents = calls.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  let stop = false;
  const workers = calls.map(async (call, position) => {
    const agent = agents[position] as Agent;
    const body = JSON.parse(call.body) as unknown;
    while (!stop) {
      const started = performance.now();
      const response = await post(agent, port, call.path, body);
      const elapsed = performance.now() - started;
      if (!measuring) continue;
      if (response.status !== 200) errors++;
      latencies.push(elapsed);
    }
  });
  await new Promise((done) => setTimeout(done, warmupSeconds * 1000));
  measuring = true;
  const windowStart = performance.now();
  const cpuStart = cpuSeconds(pid);
  await new Promise((done) => setTimeout(done, seconds * 1000));
  const cpuUsed = cpuSeconds(pid) - cpuStart;
  measuring = false;
  const windowSeconds = (performance.now() - windowStart) / 1000;
  stop = true;
  await Promise.all(workers);
  for (const agent of agents) agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    calls: latencies.length,
    perSecond: latencies.length / windowSeconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors,
    cpuPerCall: (cpuUsed / latencies.length) * 1e6,
  };
}

/**
 * wrk script: thread t (of T) cycles over sessions t, t+T, t+2T, … — with one thread it round-robins all
 * of them, so the ≤ 64 requests in flight address 64 different sessions; with T = 64 each connection is
 * bound to one session. `done` prints the summary as JSON.
 */
function wrkScript(calls: Call[]): string {
  const quote = (text: string) => JSON.stringify(text); // JSON string escapes are valid Lua string escapes for ASCII
  return `local calls = {
${calls.map((call) => `  { ${quote(call.path)}, ${quote(call.body)} },`).join("\n")}
}
local created = 0
function setup(thread)
  created = created + 1
  thread:set("first", created)
end
local threads = ${wrkThreads}
local headers = { ["Content-Type"] = "application/json" }
local prepared, cursor = nil, 1
function request()
  if not prepared then
    prepared = {}
    for position = first, #calls, threads do
      prepared[#prepared + 1] = wrk.format("POST", calls[position][1], headers, calls[position][2])
    end
  end
  local text = prepared[cursor]
  cursor = cursor % #prepared + 1
  return text
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"requests":%d,"duration_us":%d,"errors":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`;
}

function runWrk(
  port: number,
  script: string,
  duration: number,
): Promise<{ requests: number; duration_us: number; errors: number; p50_us: number; p99_us: number }> {
  const args = [`-t${wrkThreads}`, `-c${sessions}`, `-d${duration}s`, "--timeout", "10s", "-s", script, `http://127.0.0.1:${port}/`];
  const [command, commandArgs] = pin(1, "wrk", args);
  return new Promise((done, fail) => {
    const child = spawn(command, commandArgs, { stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("error", fail);
    child.on("close", (code) => {
      const line = output.split("\n").find((text) => text.startsWith("WRK_RESULT "));
      if (code !== 0 || !line) return fail(new Error(`wrk exited with ${code}: ${output.slice(-500)}`));
      done(JSON.parse(line.slice("WRK_RESULT ".length)));
    });
  });
}

async function loadWithWrk(port: number, calls: Call[], pid?: number): Promise<Omit<Result, "server" | "load">> {
  const directory = mkdtempSync(join(tmpdir(), "toolgym-bench-"));
  try {
    const script = join(directory, "calls.lua");
    writeFileSync(script, wrkScript(calls));
    await runWrk(port, script, warmupSeconds);
    const cpuStart = cpuSeconds(pid);
    const measured = await runWrk(port, script, seconds);
    const cpuUsed = cpuSeconds(pid) - cpuStart;
    return {
      calls: measured.requests,
      perSecond: measured.requests / (measured.duration_us / 1e6),
      p50: measured.p50_us / 1000,
      p99: measured.p99_us / 1000,
      errors: measured.errors,
      cpuPerCall: (cpuUsed / measured.requests) * 1e6,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

async function run(name: string, command: string, args: string[], port: number): Promise<Result> {
  const [program, programArgs] = pin(0, command, args);
  const child = spawn(program, programArgs, { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  let banner = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    if (!banner.includes("\n")) banner += chunk.toString("utf8");
  });
  try {
    await waitForPort(port, child);
    const calls = await createSessions(port);
    const load: number[] = [loadavg()[0] as number];
    const sampler = setInterval(() => load.push(loadavg()[0] as number), 1000);
    try {
      const measured = generator === "wrk" ? await loadWithWrk(port, calls, child.pid) : await loadWithNode(port, calls, child.pid);
      const implementation = name.startsWith("FastAPI") ? /loop=\S+ http=\S+/.exec(banner)?.[0] : undefined;
      return { server: implementation ? `${name}, ${implementation}` : name, ...measured, load };
    } finally {
      clearInterval(sampler);
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((done) => (child.exitCode !== null ? done(null) : child.once("exit", done)));
  }
}

const loadBefore = loadavg();
const results: Result[] = [];
const toolgymPort = await freePort();
results.push(
  await run(
    "toolgym serve (Node)",
    process.execPath,
    [resolve(root, "bin/toolgym.js"), "serve", "--port", String(toolgymPort), "--max-sessions", "4096"],
    toolgymPort,
  ),
);
const notes: string[] = [];
if (existsSync(values.python as string)) {
  const fastapiPort = await freePort();
  results.push(
    await run("FastAPI + uvicorn (Python)", values.python as string, [resolve(root, "python/bench/fastapi_server.py"), String(fastapiPort)], fastapiPort),
  );
} else {
  notes.push(`FastAPI baseline skipped: no Python at ${values.python} (run scripts/setup-python.sh)`);
}

const format = (value: number, digits = 2) => value.toFixed(digits);
const generatorText =
  generator === "wrk"
    ? `wrk -t${wrkThreads} -c${sessions} (compiled; ${wrkThreads === sessions ? "each connection bound to one session" : wrkThreads === 1 ? "requests round-robin over the sessions, so the in-flight calls address distinct sessions" : `${wrkThreads} threads, each round-robin over its share of the sessions`})`
    : "Node generator in the bench process (shares the CPUs with the server; install wrk for a fair measurement: apt-get install -y wrk)";
process.stdout.write(
  `\n${sessions} concurrent sessions, ${seconds} s window after ${warmupSeconds} s warm-up, loopback, keep-alive; step: mock env 'lookup' (in-memory table hit)\n` +
    `generator: ${generatorText}\n` +
    `pinning: ${pinned ? `server on CPU 0, ${generator === "wrk" ? "wrk on CPU 1" : "the Node generator (this process) unpinned"} (taskset)` : "none (taskset missing, --no-pin, or fewer than 2 CPUs)"}; ${availableParallelism()} CPUs\n\n`,
);
process.stdout.write("| server | tool calls/s | p50 ms | p99 ms | ratio | errors | server CPU µs/call | target |\n|---|---:|---:|---:|---:|---:|---:|---|\n");
const baseline = results[1];
for (const result of results) {
  const isToolgym = result === results[0];
  const ratio = baseline ? result.perSecond / baseline.perSecond : NaN;
  const target = !isToolgym
    ? "baseline"
    : `${baseline ? (ratio >= targetRatio ? "PASS" : "FAIL") : "n/a"} ≥ ${targetRatio}x, ${result.p99 <= targetP99 ? "PASS" : "FAIL"} p99 ≤ ${targetP99} ms`;
  process.stdout.write(
    `| ${result.server} | ${format(result.perSecond, 0)} | ${format(result.p50)} | ${format(result.p99)} | ${baseline ? `${format(ratio, 1)}x` : "-"} | ${result.errors} | ${format(result.cpuPerCall, 0)} | ${target} |\n`,
  );
}
if (baseline && Number.isFinite(results[0]!.cpuPerCall) && Number.isFinite(baseline.cpuPerCall)) {
  process.stdout.write(
    `\nserver CPU per call: toolgym ${format(results[0]!.cpuPerCall, 0)} µs vs FastAPI ${format(baseline.cpuPerCall, 0)} µs → ${format(baseline.cpuPerCall / results[0]!.cpuPerCall, 1)}x ` +
      `less CPU per call (≈ ${format(1e6 / results[0]!.cpuPerCall, 0)} vs ${format(1e6 / baseline.cpuPerCall, 0)} calls per CPU-second; the machine's other load changes this far less than calls/s and p99)\n`,
  );
}
const average = (numbers: number[]) => numbers.reduce((sum, value) => sum + value, 0) / Math.max(1, numbers.length);
process.stdout.write(
  `\nload average (1 min) before: ${format(loadBefore[0] as number)}; during: ${results.map((result) => `${result.server.split(" ")[0]} ${format(average(result.load))} (max ${format(Math.max(...result.load))})`).join(", ")} — ` +
    `includes the bench's own server + generator (≈ 2); more than that means other processes shared the ${availableParallelism()} CPUs\n`,
);
if (baseline?.server.includes("http=h11"))
  notes.push(
    "uvicorn ran on asyncio + h11; `pip install uvloop httptools` (what uvicorn[standard] adds) in that Python gives the faster FastAPI baseline (PYTHONPATH works too)",
  );
const busiest = Math.max(...results.flatMap((result) => result.load));
if (busiest > availableParallelism() + 0.5)
  notes.push(
    `the machine was shared during the run (1-min load up to ${format(busiest)} on ${availableParallelism()} CPUs): calls/s and p99 are disturbed by other processes; rerun on a quiet machine`,
  );
if (generator !== "wrk")
  notes.push(
    hasWrk
      ? "wrk not used (--generator node)"
      : "wrk not found: install it (Debian/Ubuntu: apt-get install -y wrk) so the load generator does not compete with the server",
  );
for (const note of notes) process.stdout.write(`\n${note}\n`);
