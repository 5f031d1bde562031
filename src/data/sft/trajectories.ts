/**
 * `toolgym sft trajectories`: toolgym run directories → Tau2-layout lines (`{messages, answer, tools,
 * metadata}`, one per assistant turn, conditioned on the history before it) → the same double-render,
 * prefix-checked rows as `toolgym sft tau2` (prepareTau2Sft). The tools come from the environment itself
 * (the task is regenerated from the trajectory's split, seed, index and config), so a row renders exactly the
 * prompt the model saw during `toolgym eval` and sees again in TRL's tool loop.
 */
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DataError, parseConfig, type Trajectory } from "../../core/index.ts";
import { getEnvironment, isEnvironmentId } from "../../envs/registry.ts";
import { RESULTS_FILE, findRunDirectories, scanResults } from "../../runs/reader.ts";
import type { ResultRecord } from "../../runs/schemas.ts";
import { prepareTau2Sft, type Tau2SftOptions } from "./pipeline.ts";
import type { SftReport } from "./stats.ts";

export interface TrajectorySftOptions extends Omit<Tau2SftOptions, "input"> {
  /** Run directories, or folders holding them. */
  runs: readonly string[];
  /** Keep only episodes whose reward total is at least this (default: every scored episode). */
  minReward?: number;
}

type Message = Record<string, unknown> & { role: string };

/** The tool schemas of a trajectory's task, as the environment presents them to the model. */
function toolsOf(trajectory: Trajectory, cache: Map<string, unknown[]>): unknown[] {
  const key = JSON.stringify([trajectory.env.id, trajectory.env.split, trajectory.env.seed, trajectory.env.index, trajectory.env.config]);
  const cached = cache.get(key);
  if (cached) return cached;
  if (!isEnvironmentId(trajectory.env.id))
    throw new DataError({
      code: "SFT_ENV_UNKNOWN",
      message: `trajectory ${trajectory.id} is from '${trajectory.env.id}', which this toolgym does not register`,
    });
  const env = getEnvironment(trajectory.env.id);
  const config = parseConfig(env.id, env.configSchema, trajectory.env.config ?? {});
  const episode = env.start(env.generate({ split: trajectory.env.split, seed: trajectory.env.seed, index: trajectory.env.index, config }));
  const tools = episode.tools as unknown[];
  cache.set(key, tools);
  return tools;
}

/**
 * Tool-call arguments as objects: TRL's tool loop, vLLM and transformers serve all hand the chat template
 * parsed arguments, which it renders with `tojson` (`{"query": "x"}`), not the compact wire string.
 */
function withParsedArguments(message: Message): Message {
  if (!Array.isArray(message.tool_calls)) return message;
  const calls = (message.tool_calls as Array<{ function?: { name: string; arguments: unknown } }>).map((call) => {
    const args = call.function?.arguments;
    if (typeof args !== "string") return call;
    try {
      const parsed: unknown = JSON.parse(args);
      return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? { ...call, function: { ...call.function, arguments: parsed } } : call;
    } catch {
      return call; // malformed arguments stay verbatim: the row shows what the model wrote
    }
  });
  return { ...message, tool_calls: calls };
}

/** One Tau2-layout line per assistant turn of a result. */
export function trajectoryLines(record: ResultRecord, tools: unknown[]): string[] {
  const messages = [...(record.prompt as Message[]), ...(record.completion as Message[])].map(withParsedArguments);
  const lines: string[] = [];
  messages.forEach((message, position) => {
    if (message.role !== "assistant") return;
    const metadata = { source: "toolgym", id: record.id, task: record.task, turn: position, reward: record.reward, termination: record.termination };
    lines.push(JSON.stringify({ messages: messages.slice(0, position), answer: message, tools, metadata }));
  });
  return lines;
}

/** Calls `each` with every scored episode (at least `minReward`) of the runs and its tool schemas. */
function forEachEpisode(runs: readonly string[], minReward: number | undefined, each: (record: ResultRecord, tools: unknown[]) => void): void {
  const directories = runs.flatMap((run) => findRunDirectories(run, 3));
  if (directories.length === 0)
    throw new DataError({
      code: "SFT_NO_RUNS",
      message: `no run directory (with metadata.json) under ${runs.join(", ")}; pass directories written by toolgym eval`,
    });
  const cache = new Map<string, unknown[]>();
  for (const directory of directories)
    scanResults(join(directory, RESULTS_FILE), (record) => {
      if (record.status !== "scored" || record.reward === null) return;
      if (minReward !== undefined && record.reward < minReward) return;
      each(record, toolsOf(record.info.trajectory as unknown as Trajectory, cache));
    });
}

async function writeJsonLines(path: string, lines: readonly string[]): Promise<void> {
  const stream = createWriteStream(path);
  for (const line of lines) if (!stream.write(`${line}\n`)) await once(stream, "drain");
  stream.end();
  await once(stream, "finish");
}

/** Writes the intermediate lines file; returns how many episodes and lines went in. */
async function writeLines(options: TrajectorySftOptions, path: string): Promise<{ episodes: number; lines: number }> {
  let episodes = 0;
  const lines: string[] = [];
  forEachEpisode(options.runs, options.minReward, (record, tools) => {
    episodes++;
    lines.push(...trajectoryLines(record, tools));
  });
  await writeJsonLines(path, lines);
  return { episodes, lines: lines.length };
}

/**
 * `toolgym sft conversations`: one `{messages, tools}` line per scored episode, the whole conversation with
 * tool-call arguments as objects (what a chat template renders), e.g. to train a tokenizer on. Returns the count.
 */
export async function writeTrajectoryConversations(runs: readonly string[], output: string, minReward?: number): Promise<number> {
  const lines: string[] = [];
  forEachEpisode(runs, minReward, (record, tools) => {
    const messages = [...(record.prompt as Message[]), ...(record.completion as Message[])].map(withParsedArguments);
    lines.push(JSON.stringify({ messages, tools }));
  });
  if (lines.length === 0) throw new DataError({ code: "SFT_NO_EPISODES", message: `no scored episode in ${runs.join(", ")}` });
  await writeJsonLines(output, lines);
  return lines.length;
}

/** Trajectories → pretokenised SFT rows; the report counts rows in (assistant turns) and out like `sft tau2`. */
export async function prepareTrajectorySft(options: TrajectorySftOptions): Promise<SftReport & { episodes: number }> {
  const scratch = mkdtempSync(join(tmpdir(), "toolgym-sft-trajectories-"));
  try {
    const input = join(scratch, "turns.jsonl");
    const { episodes } = await writeLines(options, input);
    if (episodes === 0)
      throw new DataError({
        code: "SFT_NO_EPISODES",
        message: `no scored episode${options.minReward !== undefined ? ` with reward >= ${options.minReward}` : ""} in ${options.runs.join(", ")}`,
      });
    const report = { ...(await prepareTau2Sft({ ...options, input })), input: options.runs.join(", "), episodes };
    // the report names the runs, not the scratch file of turns it was built from
    writeFileSync(options.reportPath ?? `${options.output}.report.json`, `${JSON.stringify(report, null, 2)}\n`);
    return report;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
