import { createHash, randomBytes } from "node:crypto";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { JsonValue, ToolSpec, Trajectory } from "../../core/index.ts";

/**
 * Writing run directories in the shared layout (`runs/<env>--<label>/<run-id>/{metadata.json,
 * results.jsonl}`), the contract between the eval harness and the reports. Used by the scripted suite path
 * and by the report tests' synthetic runs.
 */
export const RUN_SCHEMA_VERSION = 1;
export const TOOLGYM_VERSION = "0.1.0";

export interface GenerationPath {
  sampling: Record<string, JsonValue> | null;
  chatTemplateKwargs: Record<string, JsonValue> | null;
  chatTemplateHash: string | null;
  maxTurns: number | null;
  toolSchemasHash: string;
  protocol: string;
  onNoToolCall: string;
  fingerprint: string;
}

export interface RunMetadata {
  schemaVersion: number;
  runId: string;
  status: "running" | "complete";
  toolgymVersion: string;
  createdAt: string;
  finishedAt: string | null;
  env: { id: string; version: string; split: string; config: JsonValue; seed: number; n: number; samples: number; mode: string | null; protocol: string };
  benchmark: string;
  metrics: string[];
  model: { label: string; name: string; baseUrls: string[] };
  agent: { kind: string; id: string };
  generation: GenerationPath;
  taskSetHash: string;
  counts?: { scored: number; errored: number };
}

export interface ResultRecord {
  example_id: number;
  sample: number;
  id: string;
  task: string;
  prompt: JsonValue[];
  completion: JsonValue[];
  answer: string;
  reward: number | null;
  metrics: Record<string, number>;
  status: "scored" | "errored";
  error: { type: string; code: string; message: string; boundary: string } | null;
  turns: number;
  termination: string;
  format_errors: number;
  info: Record<string, JsonValue>;
}

/** JSON with object keys sorted, so hashes do not depend on key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

export function sha256(text: string): string {
  return `sha256:${createHash("sha256").update(text).digest("hex")}`;
}

export function toolSchemasHash(tools: readonly ToolSpec[]): string {
  return sha256(canonicalJson(tools));
}

/** Hash of the sorted task ids `env/split/seed/index`. */
export function taskSetHash(envId: string, split: string, seed: number, n: number): string {
  const ids = Array.from({ length: n }, (_, index) => `${envId}/${split}/${seed}/${index}`).sort();
  return sha256(ids.join("\n"));
}

/** Fills in `fingerprint`: the hash of every other field of the generation path. */
export function generationPath(fields: Omit<GenerationPath, "fingerprint">): GenerationPath {
  return { ...fields, fingerprint: sha256(canonicalJson(fields)) };
}

export function createRunId(date = new Date()): string {
  return `${date
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")}-${randomBytes(3).toString("hex")}`;
}

/** Numeric metrics of an episode: every numeric reward component and diagnostic, plus `reward`. */
export function trajectoryMetrics(trajectory: Trajectory): Record<string, number> {
  const metrics: Record<string, number> = {};
  const reward = trajectory.reward;
  if (!reward) return metrics;
  for (const [name, value] of Object.entries(reward.diagnostics ?? {})) if (typeof value === "number" && Number.isFinite(value)) metrics[name] = value;
  for (const [name, value] of Object.entries(reward.components)) if (typeof value === "number") metrics[name] = value;
  if (typeof reward.total === "number") metrics.reward = reward.total;
  return metrics;
}

/** One results.jsonl record from a finished trajectory. */
export function resultFromTrajectory(options: {
  trajectory: Trajectory;
  promptLength: number;
  sample?: number;
  answer?: string;
  startedAt: string;
  durationMs: number;
}): ResultRecord {
  const { trajectory } = options;
  const sample = options.sample ?? 0;
  const errored = trajectory.termination === "errored" || trajectory.reward === null || trajectory.reward.total === null;
  const firstError = trajectory.errors[0] ?? trajectory.reward?.errors[0];
  return {
    example_id: trajectory.env.index,
    sample,
    id: `${trajectory.id}#${sample}`,
    task: trajectory.env.id,
    prompt: trajectory.messages.slice(0, options.promptLength) as unknown as JsonValue[],
    completion: trajectory.messages.slice(options.promptLength) as unknown as JsonValue[],
    answer: options.answer ?? "",
    reward: errored ? null : (trajectory.reward?.total ?? null),
    metrics: trajectoryMetrics(trajectory),
    status: errored ? "errored" : "scored",
    error: errored ? (firstError ?? { type: "ToolgymError", code: "REWARD_MISSING", message: "the episode has no reward total", boundary: "reward" }) : null,
    turns: trajectory.turns,
    termination: trajectory.termination,
    format_errors: trajectory.formatErrors.count,
    info: { trajectory: trajectory as unknown as JsonValue, timing: { startedAt: options.startedAt, durationMs: options.durationMs } },
  };
}

/** An open run directory: metadata written as "running", results appended line by line. */
export interface RunWriter {
  directory: string;
  append(result: ResultRecord): void;
  complete(): RunMetadata;
}

export function openRunDirectory(options: {
  root: string;
  metadata: Omit<RunMetadata, "schemaVersion" | "runId" | "status" | "toolgymVersion" | "createdAt" | "finishedAt" | "counts">;
}): RunWriter {
  const runId = createRunId();
  const directory = join(options.root, `${options.metadata.env.id}--${options.metadata.model.label}`, runId);
  mkdirSync(directory, { recursive: true });
  const metadata: RunMetadata = {
    schemaVersion: RUN_SCHEMA_VERSION,
    runId,
    status: "running",
    toolgymVersion: TOOLGYM_VERSION,
    createdAt: new Date().toISOString(),
    finishedAt: null,
    ...options.metadata,
  };
  const write = () => writeFileSync(join(directory, "metadata.json"), `${JSON.stringify(metadata, null, 2)}\n`);
  write();
  writeFileSync(join(directory, "results.jsonl"), "");
  const counts = { scored: 0, errored: 0 };
  return {
    directory,
    append(result) {
      appendFileSync(join(directory, "results.jsonl"), `${JSON.stringify(result)}\n`);
      counts[result.status]++;
    },
    complete() {
      metadata.status = "complete";
      metadata.finishedAt = new Date().toISOString();
      metadata.counts = { ...counts };
      write();
      return metadata;
    },
  };
}
