// SFT preparation throughput: toolgym (`prepareTau2Sft`, segment cache, N worker threads) against the
// Python pipeline (python/crosscheck/sft_reference.py: transformers apply_chat_template twice per row +
// the fast Rust tokenizer, one process) on the same synthetic Tau2 file, side by side in one run.
//
//   npx tsx bench/sft.ts [--rows 5000] [--workers 2] [--max-tokens 32768] [--seed 0]
//
// Needs the Python venv (scripts/setup-python.sh) for the Python column.
import { spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, statSync } from "node:fs";
import { once } from "node:events";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { prepareTau2Sft } from "../src/data/sft/pipeline.ts";
import { generateTau2Lines } from "../src/data/synth/generate.ts";
import { pythonWithIntegrations, qwen3TokenizerDir } from "../test/support/qwen3.ts";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "5000" },
    workers: { type: "string", default: "2" },
    "max-tokens": { type: "string", default: "32768" },
    seed: { type: "string", default: "0" },
  },
});
const rows = Number(values.rows);
const workers = Number(values.workers);
const maxTokens = Number(values["max-tokens"]);
const root = resolve(import.meta.dirname, "..");
const outDirectory = join(root, "bench/.out");
mkdirSync(outDirectory, { recursive: true });
const input = join(outDirectory, `tau2-synth-${rows}-seed${values.seed}.jsonl`);
const modelDirectory = qwen3TokenizerDir();

if (!existsSync(input)) {
  const stream = createWriteStream(input);
  for (const line of generateTau2Lines({ n: rows, seed: Number(values.seed) })) if (!stream.write(`${line}\n`)) await once(stream, "drain");
  stream.end();
  await once(stream, "finish");
}
const megabytes = statSync(input).size / 1e6;
console.log(
  `input: ${rows} synthetic Tau2 rows, ${megabytes.toFixed(1)} MB (${((megabytes * 1e6) / rows / 1000).toFixed(1)} kB/row); machine: ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}`,
);

interface Measured {
  name: string;
  rowsOut: number;
  tokens: number;
  seconds: number;
  wallSeconds: number;
  peakMb: number;
}

async function measureToolgym(): Promise<Measured> {
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
  const started = performance.now();
  const report = await prepareTau2Sft({ input, output: join(outDirectory, "toolgym-sft.jsonl"), modelDirectory, maxTokens, workers });
  const wallSeconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, process.resourceUsage().maxRSS * 1024);
  console.log(
    `toolgym: skipped ${JSON.stringify(report.skipped)}, truncations ${JSON.stringify(report.truncations)}, cache hits ${report.segment_cache.hits} / misses ${report.segment_cache.misses}`,
  );
  return { name: `toolgym (${workers} workers)`, rowsOut: report.rows_out, tokens: report.tokens, seconds: wallSeconds, wallSeconds, peakMb: peak / 1e6 };
}

async function measurePython(): Promise<Measured | undefined> {
  const python = pythonWithIntegrations();
  if (!python) {
    console.log("Python venv missing (scripts/setup-python.sh): Python column skipped");
    return undefined;
  }
  const started = performance.now();
  const child = spawn(
    python,
    [join(root, "python/crosscheck/sft_reference.py"), modelDirectory, input, join(outDirectory, "python-sft.jsonl"), String(maxTokens)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, "close")) as [number];
  if (code !== 0) throw new Error(`sft_reference.py exited with ${code}`);
  const summary = JSON.parse(output.trim().split("\n").at(-1) as string) as { rows_out: number; tokens: number; seconds: number; peak_rss_mb: number };
  const wallSeconds = (performance.now() - started) / 1000;
  return {
    name: "Python (transformers, 1 process)",
    rowsOut: summary.rows_out,
    tokens: summary.tokens,
    seconds: summary.seconds,
    wallSeconds,
    peakMb: summary.peak_rss_mb * 1.048576,
  };
}

const toolgym = await measureToolgym();
const python = await measurePython();
const table = [toolgym, ...(python ? [python] : [])];
console.log("\n| pipeline | rows out | tokens | seconds (processing) | wall s (incl. start-up) | rows/s | tokens/s | peak RSS MB |");
console.log("|---|---|---|---|---|---|---|---|");
for (const entry of table) {
  console.log(
    `| ${entry.name} | ${entry.rowsOut} | ${entry.tokens} | ${entry.seconds.toFixed(1)} | ${entry.wallSeconds.toFixed(1)} | ${(entry.rowsOut / entry.seconds).toFixed(1)} | ${Math.round(entry.tokens / entry.seconds)} | ${entry.peakMb.toFixed(0)} |`,
  );
}
if (python) {
  console.log(
    `\nspeed-up (rows/s, toolgym wall incl. worker start-up vs Python processing time): ${(toolgym.rowsOut / toolgym.seconds / (python.rowsOut / python.seconds)).toFixed(2)}x`,
  );
  console.log("Python skips rows that need truncation (it does not truncate); toolgym truncates them, so its row count can be higher.");
}
