import { createHash } from "node:crypto";
import { createWriteStream, writeFileSync } from "node:fs";
import { once } from "node:events";
import { ByteWriter, parquetWrite } from "hyparquet-writer";
import { UsageError, parseConfig, type AnyEnvironment } from "../core/index.ts";

/**
 * One GRPO prompt row. TRL passes every column to the environment's `reset(**row)`, which rebuilds the
 * same task from `(env, split, seed, index, config)`, so all G completions of a group face one task.
 * `config` is JSON text: an object column would get a different Arrow struct type per config.
 * `env_version` and `prompt_hash` let `reset` refuse a row the running server would turn into a different
 * task (a dataset written by another version of the environment), instead of training on a wrong prompt.
 */
export interface PromptRow {
  prompt: { role: string; content: string }[];
  env: string;
  env_version: string;
  split: string;
  seed: number;
  index: number;
  config: string;
  prompt_hash: string;
}

/**
 * sha256 (hex) of the prompt messages as `[[role, content], ...]` in compact JSON (no spaces, non-ASCII
 * kept), the same bytes Python's `json.dumps(..., ensure_ascii=False, separators=(",", ":"))` writes;
 * python/toolgym_trl computes it from the messages the server starts the session with.
 */
export function promptHash(messages: readonly { role: string; content: string | null | undefined }[]): string {
  const canonical = JSON.stringify(messages.map((message) => [message.role, message.content ?? ""]));
  return createHash("sha256").update(canonical, "utf8").digest("hex");
}

export interface PromptDatasetOptions {
  env: AnyEnvironment;
  split: string;
  n: number;
  seed: number;
  /** User config (object or JSON text); validated with the environment's schema. */
  config?: unknown;
  /** Keep tasks whose reward would be partial (`Episode.partialReward`: tau2's NL assertions without a judge); left out by default. */
  partialRewards?: boolean;
  /** Told of each task index left out for a partial reward. */
  onLeftOut?: (index: number, reason: string) => void;
}

/**
 * The config a training dataset's rows carry: the environment's training defaults (`trainingConfig`), then
 * the user's. A config whose episodes a trainer could not play through the server (`trainerRefusal`) is
 * refused here, before any row is written.
 */
function trainingConfig(env: AnyEnvironment, given: unknown, split: string, seed: number): unknown {
  let object: unknown = given ?? {};
  if (typeof object === "string") {
    try {
      object = JSON.parse(object);
    } catch {
      // parseConfig reports text that is not JSON
    }
  }
  const merged = object && typeof object === "object" && !Array.isArray(object) ? { ...env.trainingConfig, ...(object as Record<string, unknown>) } : object;
  const config = parseConfig(env.id, env.configSchema, merged);
  const refusal = env.start(env.generate({ split, seed, index: 0, config })).trainerRefusal;
  if (refusal) throw new UsageError({ code: "CONFIG_NOT_TRAINABLE", message: refusal });
  return config;
}

/**
 * One row per task index. An episode that opens with I/O (tau2's simulated customer greeting the agent)
 * has its opening awaited, so the row's prompt ends with the customer's first message as a server
 * session's reset returns it. A task whose reward would be partial is left out (the server would refuse
 * its session) unless `partialRewards` is set.
 */
export async function* generatePromptRows(options: PromptDatasetOptions): AsyncGenerator<PromptRow> {
  const { env, split, n, seed } = options;
  if (!env.splits.includes(split)) throw new UsageError({ message: `${env.id}: unknown split '${split}'; available: ${env.splits.join(", ")}` });
  if (!Number.isInteger(n) || n < 1) throw new UsageError({ message: `--n must be a positive integer, got ${n}` });
  const config = trainingConfig(env, options.config, split, seed);
  const configText = JSON.stringify(config);
  for (let index = 0; index < n; index++) {
    const episode = env.start(env.generate({ split, seed, index, config }));
    const partial = episode.partialReward;
    if (partial && !options.partialRewards) {
      options.onLeftOut?.(index, partial);
      continue;
    }
    const opening = episode.opening ? await episode.opening() : [];
    const prompt = [...episode.messages, ...opening].map((message) => ({ role: message.role, content: message.content ?? "" }));
    yield { prompt, env: env.id, env_version: env.version, split, seed, index, config: configText, prompt_hash: promptHash(prompt) };
  }
}

/** The rows as they are, calling `onRow` with the count so far after each (progress); an abort of `signal` ends them. */
async function* counted(rows: AsyncIterable<PromptRow>, onRow?: (count: number) => void, signal?: AbortSignal): AsyncGenerator<PromptRow> {
  let count = 0;
  for await (const row of rows) {
    if (signal?.aborted) return;
    yield row;
    onRow?.(++count);
  }
}

async function writeJsonl(path: string, rows: AsyncIterable<PromptRow>): Promise<number> {
  const stream = createWriteStream(path);
  let count = 0;
  for await (const row of rows) {
    if (!stream.write(`${JSON.stringify(row)}\n`)) await once(stream, "drain");
    count++;
  }
  stream.end();
  await once(stream, "finish");
  return count;
}

/** Parquet with `prompt: LIST<STRUCT<role, content>>`, the layout HF `datasets` reads as chat messages. */
async function writeParquet(path: string, rows: AsyncIterable<PromptRow>): Promise<number> {
  const all: PromptRow[] = [];
  for await (const row of rows) all.push(row);
  const writer = new ByteWriter();
  const text = { type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "REQUIRED" } as const;
  // The write completes asynchronously; the buffer is read only after it has.
  await parquetWrite({
    writer,
    columnData: [
      { name: "prompt", data: all.map((row) => row.prompt) },
      { name: "env", data: all.map((row) => row.env) },
      { name: "env_version", data: all.map((row) => row.env_version) },
      { name: "split", data: all.map((row) => row.split) },
      { name: "seed", data: all.map((row) => BigInt(row.seed)) },
      { name: "index", data: all.map((row) => BigInt(row.index)) },
      { name: "config", data: all.map((row) => row.config) },
      { name: "prompt_hash", data: all.map((row) => row.prompt_hash) },
    ],
    schema: [
      { name: "root", num_children: 8 },
      { name: "prompt", repetition_type: "REQUIRED", converted_type: "LIST", num_children: 1 },
      { name: "list", repetition_type: "REPEATED", num_children: 1 },
      { name: "element", repetition_type: "REQUIRED", num_children: 2 },
      { name: "role", ...text },
      { name: "content", ...text },
      { name: "env", ...text },
      { name: "env_version", ...text },
      { name: "split", ...text },
      { name: "seed", type: "INT64", repetition_type: "REQUIRED" },
      { name: "index", type: "INT64", repetition_type: "REQUIRED" },
      { name: "config", ...text },
      { name: "prompt_hash", ...text },
    ],
    kvMetadata: [{ key: "toolgym.dataset", value: JSON.stringify({ version: 2 }) }],
  });
  writeFileSync(path, new Uint8Array(writer.getBuffer()));
  return all.length;
}

/** Writes the prompt dataset as JSONL or Parquet (chosen by the file extension); returns the row count. */
export async function writePromptDataset(
  options: PromptDatasetOptions & { out: string; onRow?: (count: number) => void; signal?: AbortSignal },
): Promise<number> {
  const rows = counted(generatePromptRows(options), options.onRow, options.signal);
  if (options.out.endsWith(".jsonl")) return writeJsonl(options.out, rows);
  if (options.out.endsWith(".parquet")) return writeParquet(options.out, rows);
  throw new UsageError({ message: `--out must end in .jsonl or .parquet, got '${options.out}'` });
}
