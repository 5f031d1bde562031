/**
 * Eval harness, side by side with a Python peer:
 *   node --expose-gc --import tsx bench/harness.ts [--concurrency 256] [--latency 100] [--episodes 10000]
 *     [--peer-episodes 3000] [--workers 1] [--json]
 * One scripted OpenAI-compatible server (src/testing/serve-fault-server.ts, its own process, a fixed latency
 * per request, playing the `mock` oracle: 2 model turns per episode) serves both harnesses in turn:
 * - toolgym: runEvaluation over the `mock` tasks, results streamed to results.jsonl;
 * - the Python peer (bench/python/harness_peer.py): built the way `verifiers` runs an evaluation
 *   (openai.AsyncOpenAI, one asyncio task per episode, a semaphore), playing the same tasks exported here.
 * Both warm up first; CPU is each process's own CPU time of its measured phase (process.cpuUsage, Python's
 * time.process_time), so the server's CPU and other engineers' load on the machine are not counted,
 * although a loaded machine still slows wall-clock throughput. Targets: toolgym CPU per model turn ≤ 1/5
 * of the peer's; throughput ≥ 90% of the ideal (concurrency / latency); heap flat over the episodes.
 * Throughput is judged at steady state (the turns finished between the 10th and 90th percentile of
 * episodes): the ideal is a steady-state rate, and the whole run also holds fixed costs that do not scale
 * with episodes (opening 256 connections, the drain below full concurrency, the summary's bootstrap), shown
 * beside it. Heap samples come from a separate run: each needs a forced full GC, which stops the event loop.
 * (Earlier runs sampled the heap in the measured run: each sample's forced full GC cost ~0.07 ms CPU per turn.)
 * `--workers 2` is worse on 2 cores: each worker thread registers tsx, whose loader thread compiles the
 * sources again (~1.8 s CPU per worker), and the scripted server needs part of the second core.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseConfig } from "../src/core/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { runEvaluation } from "../src/eval/run-evaluation.ts";
import { printRows, row } from "./comparison-rows.ts";
import { writeMockTasks } from "./python/mock-tasks.ts";

function option(name: string, fallback: number): number {
  const position = process.argv.indexOf(name);
  return position === -1 ? fallback : Number(process.argv[position + 1]);
}

const concurrency = option("--concurrency", 256);
const latencyMs = option("--latency", 100);
const episodes = option("--episodes", 10_000);
const peerEpisodes = option("--peer-episodes", 3000);
const workers = option("--workers", 1);
for (const [name, value] of [
  ["--concurrency", concurrency],
  ["--episodes", episodes],
  ["--peer-episodes", peerEpisodes],
  ["--workers", workers],
] as const) {
  // Every row compares against the peer, so it needs episodes too (0 left the Python peer waiting forever).
  if (!Number.isInteger(value) || value < 1) {
    console.error(`BENCH_USAGE: ${name} must be an integer >= 1, got ${value}`);
    process.exit(2);
  }
}
const warmup = Math.min(1000, episodes);
const root = resolve(import.meta.dirname, "..");
const python = join(root, ".venv/bin/python");

const server = spawn(process.execPath, ["--import", "tsx", join(root, "src/testing/serve-fault-server.ts"), "--latency", String(latencyMs)], {
  stdio: ["ignore", "pipe", "inherit"],
});
const url = await new Promise<string>((done) => createInterface({ input: server.stdout! }).once("line", done));
const work = mkdtempSync(join(tmpdir(), "toolgym-bench-harness-"));
const env = getEnvironment("mock");
const config = parseConfig("mock", env.configSchema, "{}");
const gc = (globalThis as { gc?: () => void }).gc;
const loadBefore = loadavg();

/** CPU seconds the server process has used so far (Linux /proc, 10 ms ticks), or NaN where unavailable. */
function serverCpuSeconds(): number {
  try {
    const fields = readFileSync(`/proc/${server.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

interface Measurement {
  episodes: number;
  turns: number;
  cpuSeconds: number;
  wallSeconds: number;
  /** Turns per second between the 10th and 90th percentile of finished episodes (NaN for the peer). */
  steadyTurnsPerSecond: number;
  serverCpuSeconds: number;
  meanReward: number;
  /** [episodes done, MB] every 1,000 episodes (toolgym: and before the run): heap after a full GC (toolgym), resident set (Python). */
  memory: Array<[number, number]>;
}

/**
 * toolgym's run of the first `n` tasks. With `sampleMemory`, a full GC and a heap sample every 1,000
 * episodes: a forced full GC stops the event loop (and every request in flight) for tens of ms, so the
 * memory run is a separate run from the one whose throughput and CPU are measured.
 */
async function runToolgym(n: number, label: string, sampleMemory = false): Promise<Measurement> {
  let turns = 0;
  let done = 0;
  let reward = 0;
  const memory: Array<[number, number]> = [];
  // Steady state: the turns finished between the 10th and the 90th percentile of episodes, over the time between them.
  const from = Math.floor(n / 10);
  const to = n - from;
  const steady = { startTurns: 0, startTime: 0, turns: 0, seconds: 0 };
  // The heap before the run: what the run keeps (its slots, its per-task totals, the episodes in flight) is growth.
  if (sampleMemory) {
    gc?.();
    memory.push([0, process.memoryUsage().heapUsed / 2 ** 20]);
  }
  const serverBefore = serverCpuSeconds();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await runEvaluation({
    rows: [{ env, config, split: "eval", seed: 0, n }],
    models: [{ kind: "openai", label, name: "scripted", baseUrls: [url] }],
    out: work,
    concurrency,
    workers,
    quiet: true,
    onEpisode: (digest) => {
      turns += digest.turns;
      reward += digest.reward ?? 0;
      ++done;
      if (done === from) Object.assign(steady, { startTurns: turns, startTime: performance.now() });
      if (done === to) Object.assign(steady, { turns: turns - steady.startTurns, seconds: (performance.now() - steady.startTime) / 1000 });
      if (!sampleMemory || done % 1000 !== 0) return;
      gc?.();
      memory.push([done, process.memoryUsage().heapUsed / 2 ** 20]);
    },
  });
  const wallSeconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return {
    episodes: done,
    turns,
    cpuSeconds: (used.user + used.system) / 1e6,
    wallSeconds,
    steadyTurnsPerSecond: steady.turns / steady.seconds,
    serverCpuSeconds: serverCpuSeconds() - serverBefore,
    meanReward: reward / done,
    memory,
  };
}

/** The Python peer's run of the same first `n` tasks (after its own warm-up). */
function runPeer(n: number): Measurement {
  const tasks = join(work, "tasks.jsonl");
  writeMockTasks(n, tasks);
  const serverBefore = serverCpuSeconds();
  const args = [join(root, "bench/python/harness_peer.py"), "--base-url", url, "--tasks", tasks, "--out", join(work, "peer.jsonl")];
  const result = spawnSync(python, [...args, "--concurrency", String(concurrency), "--warmup", String(Math.min(500, n))], {
    encoding: "utf8",
    maxBuffer: 1 << 24,
  });
  if (result.status !== 0) throw new Error(`the Python peer failed (${result.status}): ${result.stderr}`);
  const report = JSON.parse(result.stdout) as {
    episodes: number;
    turns: number;
    reward: number;
    cpu_seconds: number;
    wall_seconds: number;
    memory: Array<[number, number]>;
  };
  return {
    episodes: report.episodes,
    turns: report.turns,
    cpuSeconds: report.cpu_seconds,
    wallSeconds: report.wall_seconds,
    steadyTurnsPerSecond: Number.NaN,
    // Includes the peer's warm-up: only shown as context.
    serverCpuSeconds: serverCpuSeconds() - serverBefore,
    meanReward: report.reward / report.episodes,
    memory: report.memory,
  };
}

/**
 * Growth from the sample at `from` episodes (0: before the run; toolgym takes one there) to the highest later
 * one. From before the run it counts everything the run holds: issue 37 found +12 to +27 MB there (every slot
 * made up front, a map entry per task); the Python peer's first sample is at 1,000 episodes.
 */
function growth(memory: Array<[number, number]>, from = 0): number {
  const start = memory.findIndex(([done]) => done >= from);
  if (start === -1) return Number.NaN;
  return Math.max(...memory.slice(start).map(([, mb]) => mb)) - memory[start]![1];
}

await runToolgym(warmup, "warmup");
const toolgym = await runToolgym(episodes, "measured");
const memoryRun = await runToolgym(episodes, "memory", true);
const peer = runPeer(peerEpisodes);
server.kill("SIGTERM");
await new Promise((done) => server.once("exit", done));
rmSync(work, { recursive: true, force: true });

const ideal = concurrency / (latencyMs / 1000);
const perTurn = (measurement: Measurement) => (1000 * measurement.cpuSeconds) / measurement.turns;
const throughput = (measurement: Measurement) => measurement.turns / measurement.wallSeconds;
const cpuRatio = perTurn(toolgym) / perTurn(peer);
const heapGrowth = growth(memoryRun.memory);
const steadyHeapGrowth = growth(memoryRun.memory, 2000);
const rows = [
  row({
    name: "harness CPU per model turn (toolgym vs Python peer)",
    unit: "ms",
    toolgym: perTurn(toolgym),
    reference: perTurn(peer),
    target: "ratio ≤ 0.2",
    pass: cpuRatio <= 0.2,
  }),
  row({
    name: `throughput at concurrency ${concurrency}, ${latencyMs} ms per request, steady state (vs ideal)`,
    unit: "turns/s",
    toolgym: toolgym.steadyTurnsPerSecond,
    reference: ideal,
    target: "ratio ≥ 0.9",
    pass: toolgym.steadyTurnsPerSecond >= 0.9 * ideal,
  }),
  row({
    // Context: also counts opening the connections, the drain (the last episodes run below full concurrency) and the summary's bootstrap.
    name: "throughput over the whole run, start to summary.json (vs ideal)",
    unit: "turns/s",
    toolgym: throughput(toolgym),
    reference: ideal,
    target: "",
    pass: null,
  }),
  row({
    // What the machine's load does not change: the turns one CPU-second of toolgym carries, per thread.
    name: "CPU-bound ceiling per worker thread: 1 CPU-second / toolgym CPU per turn (vs ideal)",
    unit: "turns/s",
    toolgym: 1000 / perTurn(toolgym),
    reference: ideal,
    target: "",
    pass: null,
  }),
  row({ name: "Python peer throughput, same settings (vs ideal)", unit: "turns/s", toolgym: throughput(peer), reference: ideal, target: "", pass: null }),
  row({
    name: `memory growth over ${toolgym.episodes} episodes, from before the run (toolgym heap vs peer RSS over ${peer.episodes})`,
    unit: "MB",
    toolgym: heapGrowth,
    reference: growth(peer.memory),
    ratio: null,
    target: "toolgym ≤ 8",
    pass: Boolean(gc) && heapGrowth <= 8,
  }),
  row({
    // Context: past the ramp (256 episodes in flight), what each further 1,000 episodes add.
    name: "memory growth from 2,000 episodes on (toolgym heap)",
    unit: "MB",
    toolgym: steadyHeapGrowth,
    reference: null,
    ratio: null,
    target: "flat",
    pass: null,
  }),
  row({
    name: "episodes scored correctly (the oracle server: 1.0 expected)",
    unit: "mean reward",
    toolgym: toolgym.meanReward,
    reference: peer.meanReward,
    target: "both 1.0",
    pass: toolgym.meanReward === 1 && peer.meanReward === 1,
  }),
  row({
    name: "scripted server CPU per model turn during toolgym's run",
    unit: "ms",
    toolgym: (1000 * toolgym.serverCpuSeconds) / toolgym.turns,
    reference: null,
    target: "",
    pass: null,
  }),
];
const loadAfter = loadavg();
printRows(rows, [
  `eval harness vs a Python asyncio peer (openai.AsyncOpenAI + semaphore): toolgym ${toolgym.episodes} episodes (${toolgym.turns} model turns, ` +
    `${toolgym.wallSeconds.toFixed(1)} s, ${workers} worker thread(s)), peer ${peer.episodes} episodes (${peer.turns} turns, ${peer.wallSeconds.toFixed(1)} s)`,
  `concurrency ${concurrency}, ${latencyMs} ms per request; ${availableParallelism()} cores, load average ${loadBefore[0]!.toFixed(1)} before, ` +
    `${loadAfter[0]!.toFixed(1)} after (other processes share the cores: CPU per turn is per process, wall throughput is not)`,
  `toolgym heap samples (MB, a separate run of ${memoryRun.episodes} episodes): ${memoryRun.memory.map(([done, mb]) => `${done}:${mb.toFixed(1)}`).join(" ")}${gc ? "" : " (run with --expose-gc)"}`,
  `peer RSS samples (MB): ${peer.memory.map(([done, mb]) => `${done}:${mb.toFixed(1)}`).join(" ")}`,
]);
process.exit(0);
