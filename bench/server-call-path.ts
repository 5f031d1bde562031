/**
 * Does the socket reader pay for itself? Server CPU per `POST /sessions/:id/call` through it (what `startServer`
 * runs: src/server/http-connection.ts reads HTTP off the socket) against node:http framing every request
 * (src/server/node-transport.ts alone); both answer through the same protocol core (protocol.ts).
 *
 *     npx tsx bench/server-call-path.ts [--sessions 64] [--seconds 6] [--warmup 2] [--rounds 3]
 *
 * Each server runs in a child process (pinned to CPU 0 where `taskset` exists and there are ≥ 2 CPUs); the
 * load comes from keep-alive connections in this process, one per session, each calling `lookup` back to
 * back. The measure is the server's own CPU time (user + system, /proc) per call, as calls per CPU-second:
 * other load on the machine disturbs it far less than calls/s. The two paths alternate for `--rounds`
 * rounds and the table gives the median of each.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, createServer as createHttpServer, request } from "node:http";
import { createServer } from "node:net";
import { availableParallelism, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import { createRequestListener } from "../src/server/node-transport.ts";
import { createProtocol } from "../src/server/protocol.ts";
import { startServer } from "../src/server/start-server.ts";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "64" },
    seconds: { type: "string", default: "6" },
    warmup: { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
    serve: { type: "string" },
    port: { type: "string" },
  },
});
const PATHS = ["socket", "node"] as const;
type CallPath = (typeof PATHS)[number];

function freePort(): Promise<number> {
  return new Promise((done) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => done(port));
    });
  });
}

function post(agent: Agent, port: number, path: string, data: string): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(data) };
    const outgoing = request({ host: "127.0.0.1", port, path, method: "POST", agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => done({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
    });
    outgoing.on("error", fail);
    outgoing.end(data);
  });
}

/** CPU seconds a process has used so far (Linux /proc, 100 Hz clock ticks). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const sleep = (milliseconds: number) => new Promise((done) => setTimeout(done, milliseconds));

async function measure(path: CallPath): Promise<{ callsPerCpuSecond: number; callsPerSecond: number; calls: number }> {
  const port = await freePort();
  const pinned = availableParallelism() >= 2;
  const args = ["--import", "tsx", import.meta.filename, "--serve", path, "--port", String(port)];
  const child = pinned ? spawn("taskset", ["-c", "0", process.execPath, ...args], { stdio: "inherit" }) : spawn(process.execPath, args, { stdio: "inherit" });
  try {
    const setup = new Agent({ keepAlive: true, maxSockets: 1 });
    let created: { status: number; text: string } | undefined;
    // A loaded machine can take a minute to start a server: wait up to two.
    for (const deadline = Date.now() + 120_000; Date.now() < deadline && !created;) {
      created = await post(setup, port, "/sessions", JSON.stringify({ env: "mock", split: "train", seed: 0, index: 0 })).catch(() => undefined);
      if (!created) await sleep(100);
    }
    if (!created) throw new Error(`no ${path} server on port ${port}`);
    const calls: Array<{ url: string; body: string }> = [];
    for (let index = 0; index < Number(values.sessions); index++) {
      // A turn limit no run reaches: the server does not run calls past an episode's limit.
      const session = await post(setup, port, "/sessions", JSON.stringify({ env: "mock", split: "train", seed: 0, index, max_turns: 1e9 }));
      const json = JSON.parse(session.text) as { session_id: string; messages: Array<{ content: string }> };
      const key = /key '([^']+)'/.exec(json.messages.at(-1)?.content ?? "")?.[1];
      calls.push({ url: `/sessions/${json.session_id}/call`, body: JSON.stringify({ name: "lookup", arguments: { key } }) });
    }
    setup.destroy();
    let counting = false;
    let stop = false;
    let counted = 0;
    const workers = calls.map(async (call) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      while (!stop) {
        const reply = await post(agent, port, call.url, call.body);
        if (reply.status !== 200 || !reply.text.includes('"is_error":false')) throw new Error(`${path}: ${reply.status} ${reply.text.slice(0, 200)}`);
        if (counting) counted++;
      }
      agent.destroy();
    });
    await sleep(Number(values.warmup) * 1000);
    const cpuStart = cpuSeconds(child.pid as number);
    const started = performance.now();
    counting = true;
    await sleep(Number(values.seconds) * 1000);
    counting = false;
    const cpuUsed = cpuSeconds(child.pid as number) - cpuStart;
    const elapsed = (performance.now() - started) / 1000;
    stop = true;
    await Promise.all(workers);
    return { callsPerCpuSecond: counted / cpuUsed, callsPerSecond: counted / elapsed, calls: counted };
  } finally {
    child.kill("SIGTERM");
    await new Promise((done) => (child.exitCode !== null ? done(null) : child.once("exit", done)));
  }
}

async function main(): Promise<void> {
  const results: Record<CallPath, Array<{ callsPerCpuSecond: number; callsPerSecond: number }>> = { socket: [], node: [] };
  const load = [loadavg()[0] as number];
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const path of round % 2 === 0 ? PATHS : [...PATHS].reverse()) {
      const result = await measure(path);
      results[path].push(result);
      load.push(loadavg()[0] as number);
      process.stdout.write(
        `round ${round + 1} ${path}: ${result.callsPerCpuSecond.toFixed(0)} calls per server CPU-second, ${result.callsPerSecond.toFixed(0)} calls/s (${result.calls} calls)\n`,
      );
    }
  }
  const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)] as number;
  const socket = median(results.socket.map((result) => result.callsPerCpuSecond));
  const node = median(results.node.map((result) => result.callsPerCpuSecond));
  process.stdout.write(
    `\n| path | calls per server CPU-second (median of ${values.rounds}) | calls/s (median) |\n|---|---:|---:|\n` +
      `| http-connection.ts (socket reader) | ${socket.toFixed(0)} | ${median(results.socket.map((result) => result.callsPerSecond)).toFixed(0)} |\n` +
      `| node-transport.ts (node:http) | ${node.toFixed(0)} | ${median(results.node.map((result) => result.callsPerSecond)).toFixed(0)} |\n` +
      `\nsocket reader / node:http: ${(socket / node).toFixed(2)}x calls per CPU-second; 1-min load average ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)} on ${availableParallelism()} CPUs\n`,
  );
}

if (values.serve) {
  // Child: one server, answering until the parent kills it.
  const port = Number(values.port);
  const environments = { mock: mockEnvironment };
  if (values.serve === "socket") await startServer({ environments, port, maxSessions: 4096 });
  else createHttpServer(createRequestListener(createProtocol({ environments, maxSessions: 4096 }))).listen(port, "127.0.0.1");
} else {
  await main();
}
