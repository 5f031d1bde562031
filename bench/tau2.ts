/**
 * τ²-bench kit throughput and memory, on one thread:
 * - tool calls/s: the retail reference cases' calls, each on a fresh copy-on-write environment;
 * - replay cases evaluated per CPU-second: each retail case replayed, then tau2's evaluation with the
 *   task's reward basis and with the basis ignored (what `toolgym replay tau2 --cases` does);
 * - heap held by 1,000 concurrent retail episodes that each changed an order.
 *
 *   npx tsx --expose-gc bench/tau2.ts [--seconds 3] [--json]
 *
 * Reference (issue 14): tau2's own Python needs about 1.4 s of CPU per retail case (688 cases took 16 min
 * of CPU); the target is at least 20× less CPU per case. The memory reference is 1,000 private copies of
 * the retail DB (what a deep copy per episode would hold); the target is under 5% of that.
 */
import { readFileSync } from "node:fs";
import { readDbAsset } from "../src/envs/tau2/data.ts";
import { getDomain } from "../src/envs/tau2/domains.ts";
import { Tau2Episode } from "../src/envs/tau2/episode.ts";
import { Tau2Environment } from "../src/envs/tau2/environment.ts";
import { normalizeRetail } from "../src/envs/tau2/retail.ts";
import { replayCalls, type ReplayInput } from "../src/envs/tau2/replay.ts";
import { createScriptedUser } from "../src/envs/tau2/user.ts";

const secondsIndex = process.argv.indexOf("--seconds");
const seconds = secondsIndex > 0 ? Number(process.argv[secondsIndex + 1]) : 3;
const asJson = process.argv.includes("--json");

type Case = ReplayInput & { domain: string; task_id: string };
const cases = readFileSync(new URL("../test/fixtures/tau2/replay_cases.jsonl", import.meta.url), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as Case)
  .filter((item) => item.domain === "retail");

interface Row {
  name: string;
  unit: string;
  toolgym: number;
  reference: number | null;
  ratio: number | null;
  target: number | null;
  pass: boolean | null;
}

function cpuSeconds(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

/** Runs `body` repeatedly for the time budget; returns operations per wall second and per CPU second. */
function measure(body: () => number): { perSecond: number; perCpuSecond: number } {
  body();
  let operations = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  while (operations === 0 || performance.now() - start < seconds * 1000) operations += body();
  return { perSecond: operations / ((performance.now() - start) / 1000), perCpuSecond: operations / cpuSeconds(cpuStart) };
}

const retail = getDomain("retail");

function toolCalls(): number {
  let calls = 0;
  for (const item of cases) {
    const environment = new Tau2Environment(retail.domain);
    for (const call of item.tool_calls) {
      environment.getResponse(call);
      calls++;
    }
  }
  return calls;
}

function evaluatedCases(): number {
  for (const item of cases) replayCalls("retail", item.task_id, item);
  return cases.length;
}

function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

function memory(): { episodes: number; databaseCopy: number } {
  const tasks = retail.tasks();
  const before = heapMb();
  const copy = normalizeRetail(readDbAsset("domains/retail/db.json"));
  const databaseCopy = heapMb() - before;
  const held: unknown[] = [copy];
  held.length = 0;
  const start = heapMb();
  const episodes: Tau2Episode[] = [];
  for (let index = 0; index < 1000; index++) {
    const task = tasks[index % tasks.length]!;
    const episode = new Tau2Episode({ bundle: retail, task, user: createScriptedUser(task), judge: null, tools: [], maxSteps: 200, maxErrors: 10 });
    const write = task.evaluation_criteria?.actions?.find(
      (action) => action.name.startsWith("modify") || action.name.startsWith("cancel") || action.name.includes("delivered"),
    );
    if (write) episode.call(write.name, write.arguments);
    episodes.push(episode);
  }
  const used = heapMb() - start;
  if (episodes.length !== 1000) throw new Error("episodes were not kept alive");
  return { episodes: used, databaseCopy };
}

const rows: Row[] = [];
const calls = measure(toolCalls);
rows.push({
  name: "retail tool calls (fresh environment per case)",
  unit: "calls/s",
  toolgym: calls.perSecond,
  reference: null,
  ratio: null,
  target: null,
  pass: null,
});
const evaluated = measure(evaluatedCases);
const referenceRate = 1 / 1.4;
rows.push({
  name: "retail replay cases evaluated (replay + evaluation with and without basis)",
  unit: "cases/CPU-s",
  toolgym: evaluated.perCpuSecond,
  reference: referenceRate,
  ratio: evaluated.perCpuSecond / referenceRate,
  target: 20,
  pass: evaluated.perCpuSecond / referenceRate >= 20,
});
const heap = memory();
const copies = heap.databaseCopy * 1000;
rows.push({
  name: "heap of 1,000 concurrent retail episodes (each changed an order)",
  unit: "MB",
  toolgym: heap.episodes,
  reference: copies,
  ratio: copies / Math.max(heap.episodes, 1e-9),
  target: 20,
  pass: heap.episodes < copies * 0.05,
});

if (asJson) {
  for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
} else {
  const format = (value: number | null) => (value === null ? "—" : value >= 100 ? value.toFixed(0) : value.toFixed(2));
  process.stdout.write(
    `${"benchmark".padEnd(78)} ${"unit".padEnd(12)} ${"toolgym".padStart(10)} ${"reference".padStart(10)} ${"ratio".padStart(8)}  target  pass\n`,
  );
  for (const row of rows) {
    process.stdout.write(
      `${row.name.padEnd(78)} ${row.unit.padEnd(12)} ${format(row.toolgym).padStart(10)} ${format(row.reference).padStart(10)} ${format(row.ratio).padStart(8)}  ${row.target === null ? "—" : `≥${row.target}×`}`.padEnd(
        0,
      ) + `  ${row.pass === null ? "—" : row.pass ? "yes" : "NO"}\n`,
    );
  }
}
