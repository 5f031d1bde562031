/**
 * `toolgym sft tau2`: streams a Tau2 SFT JSONL file line by line (constant memory in the file size),
 * builds rows on worker threads (or in process with `workers: 0`), writes them in input order, and
 * returns the report. Bad lines never stop the run: they are counted and listed with their line number.
 */
import { createReadStream, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { DataError, UsageError } from "../../core/errors.ts";
import { ChatTemplate } from "../chat-template.ts";
import type { SftRowOptions } from "./build-row.ts";
import { type BatchProcessor, type LineBatch, type WorkerReply, createSftRowBuilder } from "./line-processor.ts";
import { type SftReport, SftStatsCollector } from "./stats.ts";
import { createRowWriter, outputFormatOf } from "./writers.ts";

export interface Tau2SftOptions extends SftRowOptions {
  input: string;
  output: string;
  modelDirectory: string;
  /** Worker threads; 0 processes in the calling thread. */
  workers?: number;
  batchSize?: number;
  /** Where the JSON report goes; default `<output>.report.json`. */
  reportPath?: string;
  /** The name the report gives the output, when `output` is a temporary file renamed to it afterwards. */
  outputName?: string;
  onProgress?: (rowsIn: number) => void;
}

/**
 * Splits a byte stream into numbered lines without holding more than one chunk plus one line. A UTF-8 byte
 * order mark (Windows editors write one) is dropped, as Python's utf-8-sig does: left in, it made line 1
 * malformed JSON and the row was lost.
 */
async function* readLines(path: string): AsyncGenerator<[number, string]> {
  const stream = createReadStream(path, { encoding: "utf8", highWaterMark: 1 << 20 });
  let rest = "";
  let lineNumber = 0;
  let first = true;
  for await (const chunk of stream as AsyncIterable<string>) {
    const text = rest + (first && chunk.startsWith("\uFEFF") ? chunk.slice(1) : chunk);
    first = false;
    let start = 0;
    for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n", start)) {
      lineNumber++;
      yield [lineNumber, text.slice(start, end)];
      start = end + 1;
    }
    rest = text.slice(start);
  }
  if (rest.length > 0) yield [lineNumber + 1, rest];
}

interface Pool {
  submit(batch: LineBatch): Promise<WorkerReply>;
  /** Resolves when a new batch may be submitted without exceeding the in-flight limit. */
  slot(): Promise<void>;
  close(): Promise<void>;
}

function inProcessPool(processor: BatchProcessor): Pool {
  return {
    submit: (batch) => Promise.resolve(processor.processBatch(batch)),
    slot: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

/**
 * Old-generation heap of a worker thread. A worker's live set is the tokenizer (~55 MB), its segment cache
 * (a few MB) and one batch; without a cap V8 lets each worker's heap grow far past that before collecting.
 * 2,000 synthetic rows, 1 worker: peak RSS 412 MB with a 384 MB cap, 344 MB with 256 MB, at the same CPU time.
 */
const WORKER_HEAP_MB = 256;

/** A worker that died of its heap cap, as a domain error that says what to do. */
function workerFailure(error: unknown): unknown {
  if ((error as { code?: unknown } | null)?.code !== "ERR_WORKER_OUT_OF_MEMORY") return error;
  return new DataError({
    code: "SFT_WORKER_OUT_OF_MEMORY",
    message: `a worker thread ran out of its ${WORKER_HEAP_MB} MB heap (an unusually large input line?); rerun with --workers 0 to build rows in the main thread`,
    cause: error,
  });
}

async function workerPool(count: number, workerData: unknown): Promise<Pool> {
  const entry = new URL("./worker-entry.mjs", import.meta.url);
  const workers: Worker[] = [];
  const pending = new Map<number, { resolve: (reply: WorkerReply) => void; reject: (error: unknown) => void }>();
  const inFlight = Array.from({ length: count }, () => 0);
  const limit = 2;
  let waiters: (() => void)[] = [];
  let failure: unknown;
  const start = (index: number) => {
    const worker = new Worker(entry, { workerData, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    workers.push(worker);
    return new Promise<void>((resolve, reject) => {
      worker.on("message", (message: WorkerReply | { ready: true }) => {
        if ("ready" in message) return resolve();
        inFlight[index]--;
        pending.get(message.id)?.resolve(message);
        pending.delete(message.id);
        const wake = waiters;
        waiters = [];
        for (const waiter of wake) waiter();
      });
      worker.on("error", (raw) => {
        const error = workerFailure(raw);
        failure = error;
        reject(error);
        for (const entry of pending.values()) entry.reject(error);
        pending.clear();
      });
    });
  };
  // One after another: loading tokenizer.json briefly takes ~150 MB per worker, so concurrent starts would
  // stack those peaks.
  try {
    for (let index = 0; index < count; index++) await start(index);
  } catch (error) {
    await Promise.all(workers.map((worker) => worker.terminate()));
    throw error;
  }
  const hasSlot = () => inFlight.some((count) => count < limit);
  return {
    slot: () => (failure ? Promise.reject(failure) : hasSlot() ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
    submit(batch) {
      const index = inFlight.indexOf(Math.min(...inFlight));
      inFlight[index]++;
      return new Promise((resolve, reject) => {
        pending.set(batch.id, { resolve, reject });
        workers[index].postMessage(batch);
      });
    },
    close: async () => {
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}

export async function prepareTau2Sft(options: Tau2SftOptions): Promise<SftReport> {
  const format = outputFormatOf(options.output);
  if (!format) throw new UsageError({ message: `--out ${options.output}: use a .jsonl or .parquet file name` });
  if (!Number.isInteger(options.maxTokens) || options.maxTokens < 1) throw new UsageError({ message: "--max-tokens must be a positive integer" });
  if (!existsSync(options.input))
    throw new DataError({ code: "SFT_INPUT_MISSING", message: `${options.input} does not exist; pass the path of a Tau2 SFT JSONL file` });
  // fail here, with a clear message, rather than inside every worker
  ChatTemplate.fromDirectory(options.modelDirectory);
  if (!existsSync(join(options.modelDirectory, "tokenizer.json"))) {
    throw new DataError({
      code: "MODEL_DIR_INVALID",
      message: `${join(options.modelDirectory, "tokenizer.json")} is missing; --model-dir must hold the model's tokenizer.json`,
    });
  }
  const started = performance.now();
  const workerCount = options.workers ?? 0;
  const init = { modelDirectory: options.modelDirectory, options: pickRowOptions(options), serialiseJsonl: format === "jsonl" };
  const pool = workerCount > 0 ? await workerPool(workerCount, init) : inProcessPool(createSftRowBuilder(init));
  const writer = createRowWriter(options.output, format);
  const stats = new SftStatsCollector(options.input, options.outputName ?? options.output);
  const batchSize = options.batchSize ?? 8;

  const replies = new Map<number, WorkerReply>();
  let nextToWrite = 0;
  let writing = Promise.resolve();
  const drain = async () => {
    for (let reply = replies.get(nextToWrite); reply; reply = replies.get(nextToWrite)) {
      replies.delete(nextToWrite);
      nextToWrite++;
      stats.addCache(reply.cache);
      for (const result of reply.results) stats.add(result);
      if (reply.jsonl && writer.writeSerialised) await writer.writeSerialised(reply.jsonl);
      else for (const result of reply.results) if (result.kind === "row") await writer.write(result.row);
      options.onProgress?.(stats.rowsIn);
    }
  };
  const inFlight: Promise<void>[] = [];
  const window = 2 * Math.max(1, workerCount) + 1;
  let batch: LineBatch = { id: 0, lines: [], lineNumbers: [] };
  const dispatch = async () => {
    if (batch.lines.length === 0) return;
    const current = batch;
    batch = { id: current.id + 1, lines: [], lineNumbers: [] };
    await pool.slot();
    const done = pool.submit(current).then((reply) => {
      replies.set(reply.id, reply);
      writing = writing.then(drain);
      return writing;
    });
    inFlight.push(done);
    // Each batch holds its rows (token arrays and JSONL text, up to a few MB) until it is written: a
    // window just deep enough to keep every worker busy bounds peak memory, not the file size.
    if (inFlight.length >= window) await inFlight.shift();
  };
  try {
    for await (const [lineNumber, text] of readLines(options.input)) {
      if (text.trim().length === 0) continue;
      batch.lines.push(text);
      batch.lineNumbers.push(lineNumber);
      if (batch.lines.length >= batchSize) await dispatch();
    }
    await dispatch();
    await Promise.all(inFlight);
    await writing;
  } finally {
    await pool.close();
    await writer.close();
  }
  const report = stats.finish((performance.now() - started) / 1000);
  writeFileSync(options.reportPath ?? `${options.output}.report.json`, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}

function pickRowOptions(options: Tau2SftOptions): SftRowOptions {
  return {
    maxTokens: options.maxTokens,
    enableThinking: options.enableThinking,
    onlyCorrect: options.onlyCorrect,
    keepHistoryReasoning: options.keepHistoryReasoning,
    normalizeWhitespace: options.normalizeWhitespace,
  };
}
