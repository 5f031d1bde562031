/**
 * Eval-harness benchmark: `node --expose-gc --import tsx bench/harness.ts [--concurrency 256] [--latency 20] [--episodes 10000]
 * [--no-floor] [--server-cpu-prof DIR]` (profile the harness with `node --cpu-prof …`, the server with `--server-cpu-prof`).
 * The fault-free scripted server (plays the `mock` oracle, 2 model turns per episode) runs in its own
 * process with a fixed latency per request, so the CPU measured in this process is the harness's alone:
 * the HTTP client, the rollout loop, the environment and the streaming results writer. The server's own
 * CPU is read from /proc (Linux) to show what the machine can physically reach: both processes share its cores.
 * Targets: throughput ≥ 90% of ideal (concurrency / latency per turn); CPU per model turn ≤ 0.5 ms;
 * heap flat over 10,000 episodes.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { performance as nodePerformance } from "node:perf_hooks";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseConfig } from "../src/core/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { createPoolTransport } from "../src/agents/openai/transport.ts";
import { runEvaluation } from "../src/eval/run-evaluation.ts";

function option(name: string, fallback: number): number {
  const position = process.argv.indexOf(name);
  return position === -1 ? fallback : Number(process.argv[position + 1]);
}

const concurrency = option("--concurrency", 256);
const latencyMs = option("--latency", 20);
const episodes = option("--episodes", 10_000);
const withFloor = !process.argv.includes("--no-floor");
const root = resolve(import.meta.dirname, "..");
const serverProfile = process.argv.indexOf("--server-cpu-prof");
const serverFlags = serverProfile === -1 ? [] : ["--cpu-prof", `--cpu-prof-dir=${process.argv[serverProfile + 1]}`];

const server = spawn(process.execPath, [...serverFlags, "--import", "tsx", join(root, "src/testing/serve-fault-server.ts"), "--latency", String(latencyMs)], {
  stdio: ["ignore", "pipe", "inherit"],
});
const url = await new Promise<string>((done) => createInterface({ input: server.stdout! }).once("line", done));
const out = mkdtempSync(join(tmpdir(), "toolgym-bench-harness-"));
const env = getEnvironment("mock");
const config = parseConfig("mock", env.configSchema, "{}");
const gc = (globalThis as { gc?: () => void }).gc;

/** CPU ms the server process has used so far (Linux /proc, 10 ms ticks), or NaN where unavailable. */
function serverCpuMs(): number {
  try {
    const fields = readFileSync(`/proc/${server.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

interface Measurement {
  seconds: number;
  turns: number;
  cpuMsPerTurn: number;
  serverCpuMsPerTurn: number;
  /** Share of the wall-clock time this process's event loop was busy (1: the one thread is saturated). */
  loopBusy: number;
}

async function measure(turns: () => number, body: () => Promise<void>): Promise<Measurement> {
  const serverBefore = serverCpuMs();
  const loop = nodePerformance.eventLoopUtilization();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await body();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const count = turns();
  return {
    seconds,
    turns: count,
    cpuMsPerTurn: (used.user + used.system) / 1000 / count,
    serverCpuMsPerTurn: (serverCpuMs() - serverBefore) / count,
    loopBusy: nodePerformance.eventLoopUtilization(loop).utilization,
  };
}

async function run(n: number, label: string, onEpisode?: (done: number) => void): Promise<Measurement> {
  let turns = 0;
  let done = 0;
  return measure(
    () => turns,
    async () => {
      await runEvaluation({
        rows: [{ env, config, split: "eval", seed: 0, n }],
        models: [{ kind: "openai", label, name: "scripted", baseUrls: [url] }],
        out,
        concurrency,
        quiet: true,
        onEpisode: (digest) => {
          turns += digest.turns;
          done++;
          onEpisode?.(done);
        },
      });
    },
  );
}

/** Runs `requests` round trips, `concurrency` at a time. */
async function bareRequests(requests: number, once: () => Promise<void>): Promise<Measurement> {
  let next = 0;
  return measure(
    () => requests,
    async () => {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next++ < requests) await once();
        }),
      );
    },
  );
}

/** Floors on this machine: a bare first-turn request, no rollout, no environment, no results file. */
async function floors(): Promise<{ nodeHttp: Measurement; transport: Measurement }> {
  const first = env.start(env.generate({ split: "eval", seed: 0, index: 0, config }));
  const body = JSON.stringify({ model: "scripted", messages: first.messages, tools: first.tools });
  const target = new URL(`${url}/chat/completions`);
  const agent = new HttpAgent({ keepAlive: true, scheduling: "lifo" });
  const headers = { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) };
  const nodeHttp = () =>
    new Promise<void>((done, fail) => {
      const request = httpRequest(target, { method: "POST", headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          JSON.parse(Buffer.concat(chunks).toString("utf8"));
          done();
        });
      });
      request.on("error", fail);
      request.end(body);
    });
  const transport = createPoolTransport(url, { apiKey: "EMPTY", timeoutMs: 60_000 });
  const pooled = async () => {
    JSON.parse((await transport.post("/chat/completions", body)).text);
  };
  await bareRequests(2000, nodeHttp);
  const nodeHttpResult = await bareRequests(6000, nodeHttp);
  await bareRequests(2000, pooled);
  const transportResult = await bareRequests(6000, pooled);
  agent.destroy();
  await transport.close();
  return { nodeHttp: nodeHttpResult, transport: transportResult };
}

const floor = withFloor ? await floors() : undefined;

// Warm-up (JIT, connections), then the measured run with heap samples every 1,000 episodes.
await run(Math.min(2000, episodes), "warmup");
const heap: Array<{ episodes: number; mb: number }> = [];
const measured = await run(episodes, "measured", (done) => {
  if (done % 1000 !== 0) return;
  gc?.();
  heap.push({ episodes: done, mb: process.memoryUsage().heapUsed / 2 ** 20 });
});
server.kill("SIGTERM");
await new Promise((done) => server.once("exit", done));
rmSync(out, { recursive: true, force: true });

const cores = availableParallelism();
const ideal = concurrency / (latencyMs / 1000);
const throughput = measured.turns / measured.seconds;
const cpuPerTurn = measured.cpuMsPerTurn + measured.serverCpuMsPerTurn;
const ceiling = (cores * 1000) / cpuPerTurn;
// Growth from the second sample (the first after warm-up at full concurrency) to the highest later one.
const firstHeap = heap[1] ?? heap[0];
const later = heap.slice(heap.indexOf(firstHeap as (typeof heap)[number]));
const lastHeap = later.reduce<(typeof heap)[number] | undefined>((highest, sample) => (!highest || sample.mb > highest.mb ? sample : highest), undefined);
const growth = firstHeap && lastHeap ? lastHeap.mb - firstHeap.mb : Number.NaN;
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL");
const rows: string[][] = [
  [
    "throughput (model turns/s, wall clock)",
    throughput.toFixed(0),
    `≥ ${(0.9 * ideal).toFixed(0)} (90% of ${ideal.toFixed(0)})`,
    verdict(throughput >= 0.9 * ideal),
  ],
  ["harness CPU per model turn (ms)", measured.cpuMsPerTurn.toFixed(3), "≤ 0.5", verdict(measured.cpuMsPerTurn <= 0.5)],
  [
    `heap growth ${firstHeap?.episodes ?? "?"}→${lastHeap?.episodes ?? "?"} episodes (MB, to the highest sample)`,
    Number.isNaN(growth) ? "n/a" : growth.toFixed(1),
    gc ? "≤ 8 (flat)" : "run with --expose-gc",
    verdict(Boolean(gc) && growth <= 8),
  ],
  ["server CPU per model turn (ms)", measured.serverCpuMsPerTurn.toFixed(3), "(reference)", ""],
  [`CPU-bound ceiling: ${cores} cores / (harness + server CPU per turn)`, ceiling.toFixed(0), `${(ceiling / ideal).toFixed(2)} × ideal`, ""],
  [
    `single-thread ceiling: 1 core / harness CPU per turn`,
    (1000 / measured.cpuMsPerTurn).toFixed(0),
    `${(1000 / measured.cpuMsPerTurn / ideal).toFixed(2)} × ideal`,
    "",
  ],
  [
    "harness CPU use (cores busy) / event loop busy",
    `${((measured.cpuMsPerTurn * throughput) / 1000).toFixed(2)} / ${(100 * measured.loopBusy).toFixed(0)}%`,
    "(reference)",
    "",
  ],
];
if (floor) {
  for (const [name, result] of [
    ["node:http", floor.nodeHttp],
    ["harness transport (undici)", floor.transport],
  ] as const) {
    rows.push([
      `floor: bare ${name} request, client / server CPU (ms)`,
      `${result.cpuMsPerTurn.toFixed(3)} / ${result.serverCpuMsPerTurn.toFixed(3)}`,
      `${(result.turns / result.seconds).toFixed(0)} requests/s`,
      "",
    ]);
  }
}
const header = ["metric", "value", "target", ""];
const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column]!.length)));
const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ");
console.log(
  `eval harness: ${episodes} episodes (${measured.turns} model turns), concurrency ${concurrency}, ${latencyMs} ms per request, ${measured.seconds.toFixed(1)} s; ` +
    `${cores} cores, load average ${loadavg()
      .map((value) => value.toFixed(1))
      .join(" ")} (other processes share the cores)`,
);
console.log(line(header));
console.log(line(widths.map((width) => "-".repeat(width))));
for (const row of rows) console.log(line(row));
console.log(`heap samples (MB): ${heap.map((sample) => `${sample.episodes}:${sample.mb.toFixed(1)}`).join("  ")}`);
process.exit(0);
