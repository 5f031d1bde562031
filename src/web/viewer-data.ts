import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { UsageError, type ErrorRecord, type JsonValue } from "../core/index.ts";
import { RESULTS_FILE, findRunDirectories as findRunsBelow, readMetadata, scanResults, statusNotes } from "../runs/reader.ts";
import type { ResultRecord } from "../runs/schemas.ts";

/**
 * Loading run directories for the trajectory viewer: results.jsonl is read with the run format's reader
 * (line by line: a run of thousands of long trajectories never sits in memory as one string; lines that
 * are not results are skipped and noted, never thrown), at most `limit` episodes per run, and the
 * trajectory inside each record is shaped defensively into what the page shows.
 */
export const DEFAULT_VIEW_LIMIT = 2000;

export interface ViewerRun {
  directory: string;
  runId: string;
  env: string;
  benchmark: string;
  label: string;
  model: string;
  agent: string;
  split: string;
  protocol: string;
  status: string;
  createdAt: string;
  /** Episodes loaded (at most the limit). */
  episodes: number;
  /** More results were in the file than the limit allowed. */
  truncated: boolean;
  /** What the reader had to work around (torn last line, skipped lines, duplicates, the limit). */
  notes: string[];
}

export interface ViewerToolCall {
  id: string;
  name: string;
  /** The raw arguments string as the model sent it (the page pretty-prints it when it is JSON). */
  arguments: string;
}

export interface ViewerMessage {
  role: string;
  content: string;
  reasoning?: string;
  toolCalls?: ViewerToolCall[];
  toolCallId?: string;
  name?: string;
  /** For tool results (and text-protocol replies): the step failed, and why. */
  isError?: boolean;
  errorKind?: string;
}

export interface ViewerBreakdown {
  total: number | null;
  components: Record<string, number | null>;
  formula: string;
  errors: ErrorRecord[];
  diagnostics: Record<string, JsonValue>;
}

export interface ViewerEpisode {
  /** Index into ViewerData.runs. */
  run: number;
  id: string;
  env: string;
  label: string;
  status: "scored" | "errored";
  reward: number | null;
  turns: number;
  maxTurns: number | null;
  formatErrors: number;
  termination: string;
  address: { env: string; version: string; split: string; seed: number | null; index: number | null; sample: number | null };
  answer: string;
  error: ErrorRecord | null;
  breakdown: ViewerBreakdown | null;
  diagnostics: Record<string, JsonValue>;
  formatErrorList: Array<{ kind: string; message: string }>;
  errors: ErrorRecord[];
  usage: { promptTokens: number; completionTokens: number } | null;
  durationMs: number | null;
  messages: ViewerMessage[];
}

export interface ViewerData {
  generatedAt: string;
  limit: number;
  runs: ViewerRun[];
  episodes: ViewerEpisode[];
}

type Json = Record<string, unknown>;

const asObject = (value: unknown): Json => (value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {});
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const asText = (value: unknown, fallback = ""): string =>
  typeof value === "string" ? value : value === undefined || value === null ? fallback : JSON.stringify(value);
const asNumber = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);

function asErrorRecord(value: unknown): ErrorRecord | null {
  if (value === null || typeof value !== "object") return null;
  const error = asObject(value);
  return {
    type: asText(error.type, "Error"),
    code: asText(error.code, "UNKNOWN"),
    message: asText(error.message),
    boundary: asText(error.boundary, "harness") as ErrorRecord["boundary"],
  };
}

function shapeBreakdown(value: unknown): ViewerBreakdown | null {
  if (value === null || typeof value !== "object") return null;
  const reward = asObject(value);
  const components: Record<string, number | null> = {};
  for (const [name, score] of Object.entries(asObject(reward.components))) components[name] = asNumber(score);
  return {
    total: asNumber(reward.total),
    components,
    formula: asText(reward.formula),
    errors: asArray(reward.errors).flatMap((error) => asErrorRecord(error) ?? []),
    diagnostics: asObject(reward.diagnostics) as Record<string, JsonValue>,
  };
}

function shapeMessage(value: unknown): ViewerMessage {
  const message = asObject(value);
  const shaped: ViewerMessage = { role: asText(message.role, "unknown"), content: asText(message.content) };
  if (message.reasoning_content !== undefined && message.reasoning_content !== null && message.reasoning_content !== "")
    shaped.reasoning = asText(message.reasoning_content);
  const calls = asArray(message.tool_calls);
  if (calls.length > 0) {
    shaped.toolCalls = calls.map((call) => {
      const fields = asObject(call);
      const fn = asObject(fields.function);
      return { id: asText(fields.id), name: asText(fn.name), arguments: asText(fn.arguments) };
    });
  }
  if (message.tool_call_id !== undefined) shaped.toolCallId = asText(message.tool_call_id);
  if (message.name !== undefined) shaped.name = asText(message.name);
  return shaped;
}

/**
 * Marks failed steps on their messages: with tool calls each tool message is one step, in order; with the
 * text protocol each assistant reply after the prompt is one `reply` step.
 */
function markSteps(messages: ViewerMessage[], steps: unknown[]): void {
  const records = steps.map(asObject);
  const toolSteps = records.filter((step) => step.name !== "reply");
  const replySteps = records.filter((step) => step.name === "reply");
  let tool = 0;
  let reply = 0;
  for (const message of messages) {
    let step: Json | undefined;
    if (message.role === "tool") step = toolSteps[tool++];
    else if (message.role === "assistant" && !message.toolCalls) step = replySteps[reply++];
    if (step?.isError !== true) continue;
    message.isError = true;
    if (typeof step.errorKind === "string") message.errorKind = step.errorKind;
  }
}

/** Shapes one results.jsonl record (the run format) into what the viewer shows. */
export function shapeEpisode(record: ResultRecord, run: number, label: string): ViewerEpisode {
  const info = asObject(record.info);
  const trajectory = asObject(info.trajectory);
  const hasTrajectory = Array.isArray(trajectory.messages);
  const messages = (hasTrajectory ? asArray(trajectory.messages) : [...asArray(record.prompt), ...asArray(record.completion)]).map(shapeMessage);
  markSteps(messages, asArray(trajectory.steps));
  const env = asObject(trajectory.env);
  const formatErrors = asObject(trajectory.formatErrors);
  const usage = asObject(trajectory.usage);
  const breakdown = shapeBreakdown(trajectory.reward);
  const status = record.status === "errored" ? "errored" : "scored";
  return {
    run,
    id: asText(record.id, "(no id)"),
    env: asText(record.task, asText(env.id)),
    label,
    status,
    reward: status === "errored" ? null : asNumber(record.reward),
    turns: asNumber(record.turns) ?? asNumber(trajectory.turns) ?? 0,
    maxTurns: asNumber(trajectory.maxTurns),
    formatErrors: asNumber(record.format_errors) ?? asNumber(formatErrors.count) ?? 0,
    termination: asText(record.termination, asText(trajectory.termination)),
    address: {
      env: asText(env.id, asText(record.task)),
      version: asText(env.version),
      split: asText(env.split),
      seed: asNumber(env.seed),
      index: asNumber(env.index) ?? asNumber(record.example_id),
      sample: asNumber(record.sample),
    },
    answer: asText(record.answer),
    error: asErrorRecord(record.error),
    breakdown,
    diagnostics: asObject(trajectory.diagnostics) as Record<string, JsonValue>,
    formatErrorList: asArray(formatErrors.list).map((item) => ({ kind: asText(asObject(item).kind), message: asText(asObject(item).message) })),
    errors: asArray(trajectory.errors).flatMap((error) => asErrorRecord(error) ?? []),
    usage: Object.keys(usage).length > 0 ? { promptTokens: asNumber(usage.promptTokens) ?? 0, completionTokens: asNumber(usage.completionTokens) ?? 0 } : null,
    durationMs: asNumber(asObject(info.timing).durationMs),
    messages,
  };
}

/** Run directories (holding metadata.json) given directly or found up to 4 levels below the paths. */
export function findRunDirectories(paths: readonly string[]): string[] {
  if (paths.length === 0) throw new UsageError({ code: "VIEW_NO_INPUT", message: "pass at least one run directory, e.g. toolgym view runs" });
  const found: string[] = [];
  for (const path of paths) {
    const absolute = resolve(path);
    if (!existsSync(absolute) || !statSync(absolute).isDirectory())
      throw new UsageError({ code: "VIEW_NO_INPUT", message: `'${path}' is not a directory; pass run directories written by toolgym eval` });
    const before = found.length;
    found.push(...findRunsBelow(absolute, 4));
    if (found.length === before) throw new UsageError({ code: "VIEW_NO_INPUT", message: `'${path}' holds no run (no metadata.json within 4 levels)` });
  }
  return [...new Set(found)];
}

/** Reads one run: its metadata and up to `limit` results. */
export async function readRunForViewer(directory: string, run: number, limit: number): Promise<{ run: ViewerRun; episodes: ViewerEpisode[] }> {
  const metadata = readMetadata(directory);
  const label = metadata.model.label;
  const episodes: ViewerEpisode[] = [];
  let truncated = false;
  const resultsPath = join(directory, RESULTS_FILE);
  const notes: string[] = [];
  if (existsSync(resultsPath)) {
    const scan = scanResults(resultsPath, (record) => {
      if (episodes.length >= limit) {
        truncated = true;
        return "stop";
      }
      episodes.push(shapeEpisode(record, run, label));
    });
    notes.push(...scan.notes);
  } else {
    notes.push("no results.jsonl yet");
  }
  if (truncated) notes.push(`showing the first ${limit} results only (--limit ${limit})`);
  notes.push(...statusNotes(metadata));
  return {
    run: {
      directory,
      runId: metadata.runId,
      env: metadata.env.id,
      benchmark: metadata.benchmark,
      label,
      model: metadata.model.name,
      agent: metadata.agent.id,
      split: metadata.env.split,
      protocol: metadata.env.protocol,
      status: metadata.status,
      createdAt: metadata.createdAt,
      episodes: episodes.length,
      truncated,
      notes,
    },
    episodes,
  };
}

/** Loads every run found under `paths` (run directories or folders holding them). */
export async function loadViewerData(paths: readonly string[], options: { limit?: number } = {}): Promise<ViewerData> {
  const limit = options.limit ?? DEFAULT_VIEW_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError({ code: "VIEW_LIMIT", message: `--limit must be a positive integer, got ${limit}` });
  const data: ViewerData = { generatedAt: new Date().toISOString(), limit, runs: [], episodes: [] };
  for (const directory of findRunDirectories(paths)) {
    const { run, episodes } = await readRunForViewer(directory, data.runs.length, limit);
    data.runs.push(run);
    for (const episode of episodes) data.episodes.push(episode);
  }
  return data;
}
