/**
 * Load test of `toolgym serve` against a minimal FastAPI/uvicorn server doing the same in-memory step.
 *
 *     npx tsx bench/server.ts [--sessions 64] [--seconds 10] [--python .venv/bin/python]
 *
 * Each server runs as a child process on loopback. 64 concurrent sessions (one keep-alive connection each)
 * call `lookup` back to back for the measured window after a warm-up; the table gives tool calls per
 * second and p50/p99 latency. The FastAPI row is skipped (with a note) when fastapi/uvicorn are missing.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { Agent, request } from "node:http";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { parseArgs } from "node:util";

const root = resolve(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "64" },
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    python: { type: "string", default: process.env.TOOLGYM_PYTHON ?? resolve(root, ".venv/bin/python") },
  },
});
const sessions = Number(values.sessions);
const seconds = Number(values.seconds);
const warmupSeconds = Number(values.warmup);

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
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? NaN;
}

async function load(name: string, port: number, env: string): Promise<Result> {
  const agents = Array.from({ length: sessions }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++) {
    const created = await post(agents[i] as Agent, port, "/sessions", { env, split: "train", seed: 0, index: i });
    ids.push(created.json.session_id as string);
  }
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  let stop = false;
  const workers = ids.map(async (id, position) => {
    const agent = agents[position] as Agent;
    while (!stop) {
      const started = performance.now();
      const response = await post(agent, port, `/sessions/${id}/call`, { name: "lookup", arguments: { key: "kalo" } });
      const elapsed = performance.now() - started;
      if (!measuring) continue;
      if (response.status !== 200) errors++;
      latencies.push(elapsed);
    }
  });
  await new Promise((done) => setTimeout(done, warmupSeconds * 1000));
  measuring = true;
  const windowStart = performance.now();
  await new Promise((done) => setTimeout(done, seconds * 1000));
  measuring = false;
  const windowSeconds = (performance.now() - windowStart) / 1000;
  stop = true;
  await Promise.all(workers);
  for (const agent of agents) agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    server: name,
    calls: latencies.length,
    perSecond: latencies.length / windowSeconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors,
  };
}

async function run(name: string, command: string, args: string[], port: number, env: string): Promise<Result> {
  const child = spawn(command, args, { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  try {
    await waitForPort(port, child);
    return await load(name, port, env);
  } finally {
    child.kill("SIGTERM");
  }
}

const results: Result[] = [];
const toolgymPort = await freePort();
results.push(
  await run(
    "toolgym serve (Hono, Node)",
    process.execPath,
    [resolve(root, "bin/toolgym.js"), "serve", "--port", String(toolgymPort), "--max-sessions", "4096"],
    toolgymPort,
    "mock",
  ),
);
let note = "";
if (existsSync(values.python as string)) {
  const fastapiPort = await freePort();
  results.push(
    await run(
      "FastAPI + uvicorn (Python)",
      values.python as string,
      [resolve(root, "python/bench/fastapi_server.py"), String(fastapiPort)],
      fastapiPort,
      "mock",
    ),
  );
} else {
  note = `FastAPI baseline skipped: no Python at ${values.python} (run scripts/setup-python.sh)`;
}

const format = (value: number, digits = 2) => value.toFixed(digits);
process.stdout.write(
  `\n${sessions} concurrent sessions, ${seconds} s window after ${warmupSeconds} s warm-up, loopback, one keep-alive connection per session\n\n`,
);
process.stdout.write("| server | tool calls/s | p50 ms | p99 ms | errors |\n|---|---:|---:|---:|---:|\n");
for (const result of results)
  process.stdout.write(`| ${result.server} | ${format(result.perSecond, 0)} | ${format(result.p50)} | ${format(result.p99)} | ${result.errors} |\n`);
if (results.length === 2) {
  const [toolgym, fastapi] = results as [Result, Result];
  process.stdout.write(
    `\nthroughput ratio toolgym/FastAPI: ${format(toolgym.perSecond / fastapi.perSecond, 1)}x (target >= 5x); toolgym p99 ${format(toolgym.p99)} ms (target <= 5 ms)\n`,
  );
}
if (note) process.stdout.write(`\n${note}\n`);
