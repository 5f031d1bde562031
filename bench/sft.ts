// SFT preparation: toolgym (`prepareTau2Sft`, segment cache, N worker threads) against the Python pipeline
// (python/crosscheck/sft_reference.py: transformers apply_chat_template twice per row + the fast Rust
// tokenizer, one process) on the same synthetic Tau2 file. Each side runs in a fresh process of its own, so
// each peak RSS is that process's own (the OS high-water mark, like Python's ru_maxrss), and the runs
// alternate `--repeat` times; the rows report medians.
//
// Speed is judged in CPU-seconds summed over all threads (toolgym: process.cpuUsage around the pipeline,
// worker threads included; Python: resource.getrusage around its processing loop), so other load on the
// machine does not distort it; wall-clock rates are shown as context. Both sides count the input rows
// they processed (Python drops rows that need truncation; toolgym truncates them, which costs it extra).
//
//   npx tsx bench/sft.ts [--rows 2000] [--workers 1] [--repeat 3] [--max-tokens 32768] [--seed 0] [--json]
//
// Needs the Python venv (scripts/setup-python.sh) for the reference column.
import { spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, statSync } from "node:fs";
import { once } from "node:events";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { prepareTau2Sft } from "../src/data/sft/pipeline.ts";
import { generateTau2Lines } from "../src/data/synth/generate.ts";
import { pythonWithIntegrations, qwen3TokenizerDir } from "../test/support/qwen3.ts";
import { type ComparisonRow, printRows, row } from "./comparison-rows.ts";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "2000" },
    workers: { type: "string", default: "1" },
    repeat: { type: "string", default: "3" },
    "max-tokens": { type: "string", default: "32768" },
    seed: { type: "string", default: "0" },
    json: { type: "boolean", default: false },
    /** Internal: run toolgym once in this (fresh) process and print its measurement as JSON. */
    "measure-toolgym": { type: "string" },
  },
});
const workers = Number(values.workers);
const maxTokens = Number(values["max-tokens"]);
const root = resolve(import.meta.dirname, "..");
const outDirectory = join(root, "bench/.out");

/** One measured run of one side. */
interface Measured {
  rowsIn: number;
  rowsOut: number;
  tokens: number;
  cpuSeconds: number;
  wallSeconds: number;
  peakMb: number;
}

async function measureToolgymHere(input: string): Promise<Measured> {
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const report = await prepareTau2Sft({ input, output: join(outDirectory, "toolgym-sft.jsonl"), modelDirectory: qwen3TokenizerDir(), maxTokens, workers });
  const wallSeconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  // maxRSS (kB) is the process's high-water mark, so a peak between two samples is not missed
  peak = Math.max(peak, process.resourceUsage().maxRSS * 1024);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  return { rowsIn: report.rows_in, rowsOut: report.rows_out, tokens: report.tokens, cpuSeconds, wallSeconds, peakMb: peak / 1e6 };
}

if (values["measure-toolgym"]) {
  console.log(JSON.stringify(await measureToolgymHere(values["measure-toolgym"])));
  process.exit(0);
}

async function runChild(command: string, args: string[]): Promise<string> {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, "close")) as [number];
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${code}`);
  return output;
}

async function measureToolgym(input: string): Promise<Measured> {
  const output = await runChild(process.execPath, [
    ...process.execArgv,
    import.meta.filename,
    "--measure-toolgym",
    input,
    "--workers",
    String(workers),
    "--max-tokens",
    String(maxTokens),
  ]);
  return JSON.parse(output.trim().split("\n").at(-1) as string) as Measured;
}

// Loads sft_reference.py as a module and times its per-file loop (run_job) in CPU and wall seconds, so the
// reference's own start-up (importing transformers, loading the tokenizer) is left out, as toolgym's tsx
// start-up is; ru_maxrss is the whole process's peak.
const pythonHarness = `
import importlib.util, json, resource, sys, time
spec = importlib.util.spec_from_file_location("sft_reference", sys.argv[1])
reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference)
original = reference.run_job
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
def timed(*args):
    cpu_before, wall_before = cpu(), time.perf_counter()
    summary = original(*args)
    summary["cpu_seconds"] = cpu() - cpu_before
    summary["wall_seconds"] = time.perf_counter() - wall_before
    summary["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return summary
reference.run_job = timed
sys.argv = sys.argv[1:]
reference.main()
`;

async function measurePython(python: string, input: string): Promise<Measured> {
  const script = join(root, "python/crosscheck/sft_reference.py");
  const output = await runChild(python, ["-c", pythonHarness, script, qwen3TokenizerDir(), input, join(outDirectory, "python-sft.jsonl"), String(maxTokens)]);
  const summary = JSON.parse(output.trim().split("\n").at(-1) as string) as {
    rows_in: number;
    rows_out: number;
    tokens: number;
    cpu_seconds: number;
    wall_seconds: number;
    peak_rss_mb: number;
  };
  return {
    rowsIn: summary.rows_in,
    rowsOut: summary.rows_out,
    tokens: summary.tokens,
    cpuSeconds: summary.cpu_seconds,
    wallSeconds: summary.wall_seconds,
    // ru_maxrss is in KiB on Linux; MB here, as on the toolgym side
    peakMb: summary.peak_rss_mb * 1.048576,
  };
}

function median(numbers: number[]): number {
  const sorted = [...numbers].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function medians(runs: Measured[]): Measured {
  const of = (key: keyof Measured) => median(runs.map((run) => run[key]));
  return {
    rowsIn: of("rowsIn"),
    rowsOut: of("rowsOut"),
    tokens: of("tokens"),
    cpuSeconds: of("cpuSeconds"),
    wallSeconds: of("wallSeconds"),
    peakMb: of("peakMb"),
  };
}

async function inputFile(rows: number, seed: number): Promise<string> {
  mkdirSync(outDirectory, { recursive: true });
  const input = join(outDirectory, `tau2-synth-${rows}-seed${seed}.jsonl`);
  if (existsSync(input)) return input;
  const stream = createWriteStream(input);
  for (const line of generateTau2Lines({ n: rows, seed })) if (!stream.write(`${line}\n`)) await once(stream, "drain");
  stream.end();
  await once(stream, "finish");
  return input;
}

function comparisonRows(toolgym: Measured, python: Measured | undefined): ComparisonRow[] {
  const context = { target: "context", pass: null };
  const rows = [
    row({
      name: `peak RSS (toolgym, ${workers} workers)`,
      unit: "MB",
      toolgym: toolgym.peakMb,
      reference: python?.peakMb ?? null,
      target: "ratio ≤ 1",
      pass: null,
    }),
    row({
      name: "input rows per CPU-second",
      unit: "rows/CPU-s",
      toolgym: toolgym.rowsIn / toolgym.cpuSeconds,
      reference: python ? python.rowsIn / python.cpuSeconds : null,
      target: "ratio ≥ 4",
      pass: null,
    }),
    row({
      name: "input rows per wall second",
      unit: "rows/s",
      toolgym: toolgym.rowsIn / toolgym.wallSeconds,
      reference: python ? python.rowsIn / python.wallSeconds : null,
      ...context,
    }),
    row({ name: "CPU-seconds", unit: "s", toolgym: toolgym.cpuSeconds, reference: python?.cpuSeconds ?? null, ...context }),
    row({ name: "rows out", unit: "rows", toolgym: toolgym.rowsOut, reference: python?.rowsOut ?? null, ...context }),
    row({ name: "tokens out", unit: "tokens", toolgym: toolgym.tokens, reference: python?.tokens ?? null, ...context }),
  ];
  if (python) {
    rows[0] = { ...rows[0]!, pass: (rows[0]!.ratio as number) <= 1 };
    rows[1] = { ...rows[1]!, pass: (rows[1]!.ratio as number) >= 4 };
  }
  return rows;
}

const rows = Number(values.rows);
const input = await inputFile(rows, Number(values.seed));
const python = pythonWithIntegrations();
const log = (text: string) => (values.json ? console.error(text) : console.log(text));
const megabytes = statSync(input).size / 1e6;
const header = [
  `input: ${rows} synthetic Tau2 rows, ${megabytes.toFixed(1)} MB (${((megabytes * 1e6) / rows / 1000).toFixed(1)} kB/row); machine: ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}`,
];
log(header[0]!);
if (!python) log("Python venv missing (scripts/setup-python.sh): reference column left empty");
const toolgymRuns: Measured[] = [];
const pythonRuns: Measured[] = [];
const show = (side: string, run: Measured) =>
  log(`${side}: ${run.cpuSeconds.toFixed(1)} CPU-s, ${run.wallSeconds.toFixed(1)} s wall, peak ${run.peakMb.toFixed(0)} MB, ${run.rowsOut} rows out`);
for (let index = 0; index < Number(values.repeat); index++) {
  const toolgym = await measureToolgym(input);
  toolgymRuns.push(toolgym);
  show(`toolgym run ${index + 1}`, toolgym);
  if (python) {
    const reference = await measurePython(python, input);
    pythonRuns.push(reference);
    show(`Python run ${index + 1}`, reference);
  }
}
header.push(`medians of ${toolgymRuns.length} runs per side; load average now ${loadavg()[0].toFixed(1)}`);
printRows(comparisonRows(medians(toolgymRuns), python ? medians(pythonRuns) : undefined), header);
