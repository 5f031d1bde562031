/**
 * Eval-harness benchmark: `node --expose-gc --import tsx bench/harness.ts [--concurrency 256] [--latency 20] [--episodes 10000]`.
 * The fault-free scripted server (plays the `mock` oracle, 2 model turns per episode) runs in its own
 * process with a fixed latency per request, so the CPU measured here is the harness's alone: the OpenAI
 * client, the rollout loop, the environment and the streaming results writer.
 * Targets: throughput ≥ 90% of ideal (concurrency / latency per turn); CPU per model turn ≤ 0.5 ms;
 * heap flat over 10,000 episodes.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseConfig } from "../src/core/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { runEvaluation } from "../src/eval/run-evaluation.ts";

function option(name: string, fallback: number): number {
  const position = process.argv.indexOf(name);
  return position === -1 ? fallback : Number(process.argv[position + 1]);
}

const concurrency = option("--concurrency", 256);
const latencyMs = option("--latency", 20);
const episodes = option("--episodes", 10_000);
const root = resolve(import.meta.dirname, "..");

const server = spawn(process.execPath, ["--import", "tsx", join(root, "src/testing/serve-fault-server.ts"), "--latency", String(latencyMs)], {
  stdio: ["ignore", "pipe", "inherit"],
});
const url = await new Promise<string>((done) => createInterface({ input: server.stdout! }).once("line", done));
const out = mkdtempSync(join(tmpdir(), "toolgym-bench-harness-"));
const env = getEnvironment("mock");
const config = parseConfig("mock", env.configSchema, "{}");
const gc = (globalThis as { gc?: () => void }).gc;

async function run(n: number, label: string, onEpisode?: (done: number) => void) {
  let turns = 0;
  let done = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
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
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { seconds, turns, cpuMsPerTurn: (used.user + used.system) / 1000 / turns };
}

/** The floor on this machine: CPU of a bare `fetch` round trip of a first-turn request (no client library, no harness). */
async function bareFetch(requests: number): Promise<number> {
  const first = env.start(env.generate({ split: "eval", seed: 0, index: 0, config }));
  const body = JSON.stringify({ model: "scripted", messages: first.messages, tools: first.tools });
  let next = 0;
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < requests)
        await (await fetch(`${url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body })).json();
    }),
  );
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / 1000 / requests;
}

await bareFetch(2000);
const floorMs = await bareFetch(4000);

// Warm-up (JIT, connections), then the measured run with heap samples every 1,000 episodes.
await run(Math.min(2000, episodes), "warmup");
const heap: Array<{ episodes: number; mb: number }> = [];
const measured = await run(episodes, "measured", (done) => {
  if (done % 1000 !== 0) return;
  gc?.();
  heap.push({ episodes: done, mb: process.memoryUsage().heapUsed / 2 ** 20 });
});
server.kill("SIGTERM");
rmSync(out, { recursive: true, force: true });

const ideal = concurrency / (latencyMs / 1000);
const throughput = measured.turns / measured.seconds;
const firstHeap = heap[1] ?? heap[0];
const lastHeap = heap[heap.length - 1];
const growth = firstHeap && lastHeap ? lastHeap.mb - firstHeap.mb : Number.NaN;
const rows: Array<[string, string, string, string]> = [
  [
    "throughput (model turns/s)",
    throughput.toFixed(0),
    `≥ ${(0.9 * ideal).toFixed(0)} (90% of ${ideal.toFixed(0)})`,
    throughput >= 0.9 * ideal ? "ok" : "MISS",
  ],
  ["harness CPU per model turn (ms)", measured.cpuMsPerTurn.toFixed(3), "≤ 0.5", measured.cpuMsPerTurn <= 0.5 ? "ok" : "MISS"],
  ["  floor: bare fetch per request (ms)", floorMs.toFixed(3), "(reference)", ""],
  [
    `heap growth ${firstHeap?.episodes ?? "?"}→${lastHeap?.episodes ?? "?"} episodes (MB)`,
    Number.isNaN(growth) ? "n/a" : growth.toFixed(1),
    gc ? "≤ 8 (flat)" : "run with --expose-gc",
    gc && growth <= 8 ? "ok" : "MISS",
  ],
];
const widths = [0, 1, 2, 3].map((column) => Math.max(...[["metric", "value", "target", ""], ...rows].map((row) => row[column]!.length)));
const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ");
console.log(
  `eval harness: ${episodes} episodes (${measured.turns} model turns), concurrency ${concurrency}, ${latencyMs} ms per request, ${measured.seconds.toFixed(1)} s`,
);
console.log(line(["metric", "value", "target", ""]));
console.log(line(widths.map((width) => "-".repeat(width))));
for (const row of rows) console.log(line(row));
console.log(`heap samples (MB): ${heap.map((sample) => `${sample.episodes}:${sample.mb.toFixed(1)}`).join("  ")}`);
process.exit(0);
