import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { UsageError, createRandom, type Agent, type AnyEnvironment, type JsonValue } from "../core/index.ts";
import { createOpenAIAgent, createProviderStats, type ProviderStats, type SamplingParams } from "../agents/openai/agent.ts";
import { ReplicaPool, redactBaseUrl } from "../agents/openai/replicas.ts";
import { getPolicies, getPolicy } from "../agents/scripted/registry.ts";
import { runEpisode } from "../rollout/run-episode.ts";
import { createProgress } from "./progress.ts";
import { ResultsWriter, digestOf, readResultsForResume, type ResultDigest } from "./results-file.ts";
import {
  RUN_SCHEMA_VERSION,
  TOOLGYM_VERSION,
  createRunId,
  generationPath,
  resultFromTrajectory,
  taskSetHash,
  toolSchemasHash,
  type RunMetadata,
} from "./suites/run-directory.ts";
import { RunTotals, type RunSummary } from "./summary.ts";

export { formatSummaryTable, type RunSummary } from "./summary.ts";

export interface EvaluationRow {
  env: AnyEnvironment;
  /** Parsed config (parseConfig). */
  config: unknown;
  split: string;
  seed: number;
  n: number;
  samples?: number;
  maxTurns?: number;
  onNoToolCall?: "nudge" | "end";
  benchmark?: string;
  metrics?: string[];
  mode?: string | null;
}

export type ModelSpec =
  | {
      kind: "openai";
      label: string;
      name: string;
      baseUrls: string[];
      apiKey?: string;
      sampling?: SamplingParams;
      chatTemplateKwargs?: Record<string, JsonValue>;
      chatTemplateHash?: string | null;
      timeoutMs?: number;
      maxRetries?: number;
      backoffMs?: number;
      fetch?: typeof fetch;
      /** HTTP client: `undici` (default) or `openai` (the official npm client). */
      client?: "undici" | "openai";
    }
  | { kind: "scripted"; label?: string; policy?: string };

export interface RunEvaluationOptions {
  rows: EvaluationRow[];
  models: ModelSpec[];
  /** Root directory (default `runs`). */
  out?: string;
  /** Episodes in flight (default 64). */
  concurrency?: number;
  resume?: boolean;
  runId?: string;
  quiet?: boolean;
  signal?: AbortSignal;
  /** Called after each finished episode is on disk (tests, benchmarks). */
  onEpisode?: (digest: ResultDigest) => void;
}

export const DEFAULT_CONCURRENCY = 64;

/** A label usable as a directory name. */
export function modelLabel(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^_+|_+$/g, "") || "model";
}

function scriptedPolicyFor(env: AnyEnvironment, policyId?: string) {
  if (policyId) return getPolicy(env.id, policyId);
  const policy = getPolicies(env.id).find((candidate) => candidate.kind === "genuine");
  if (!policy) throw new UsageError({ code: "POLICY_MISSING", message: `no genuine scripted agent for ${env.id}; pass --agent` });
  return policy;
}

interface PreparedModel {
  label: string;
  metadata: Pick<RunMetadata, "model" | "agent">;
  sampling: Record<string, JsonValue> | null;
  chatTemplateKwargs: Record<string, JsonValue> | null;
  chatTemplateHash: string | null;
  createAgent(context: { env: AnyEnvironment; task: unknown; index: number; sample: number; episodeId: string; split: string; seed: number }): Agent;
  stats: ProviderStats | null;
  pool: ReplicaPool | null;
}

function prepareModel(spec: ModelSpec, env: AnyEnvironment): PreparedModel {
  if (spec.kind === "scripted") {
    const policy = scriptedPolicyFor(env, spec.policy);
    return {
      label: spec.label ?? `scripted-${policy.id}`,
      metadata: {
        model: { label: spec.label ?? `scripted-${policy.id}`, name: `scripted:${policy.id}`, baseUrls: [] },
        agent: { kind: "scripted", id: policy.id },
      },
      sampling: null,
      chatTemplateKwargs: null,
      chatTemplateHash: null,
      createAgent: ({ task, index, sample, split, seed }) => policy.create({ task, random: createRandom("policy", policy.id, split, seed, index, sample) }),
      stats: null,
      pool: null,
    };
  }
  const pool = new ReplicaPool({ baseUrls: spec.baseUrls, apiKey: spec.apiKey, timeoutMs: spec.timeoutMs, fetch: spec.fetch, client: spec.client });
  const stats = createProviderStats();
  const sampling = { ...(spec.sampling ?? {}) } as Record<string, JsonValue>;
  return {
    label: spec.label,
    metadata: { model: { label: spec.label, name: spec.name, baseUrls: spec.baseUrls.map(redactBaseUrl) }, agent: { kind: "openai", id: "openai" } },
    sampling,
    chatTemplateKwargs: spec.chatTemplateKwargs ?? null,
    chatTemplateHash: spec.chatTemplateHash ?? null,
    createAgent: ({ episodeId }) =>
      createOpenAIAgent({
        pool,
        model: spec.name,
        sampling: spec.sampling,
        chatTemplateKwargs: spec.chatTemplateKwargs,
        maxRetries: spec.maxRetries,
        backoffMs: spec.backoffMs,
        episodeKey: episodeId,
        stats,
      }),
    stats,
    pool,
  };
}

function writeMetadata(directory: string, metadata: RunMetadata): void {
  const path = join(directory, "metadata.json");
  writeFileSync(`${path}.tmp`, `${JSON.stringify(metadata, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
}

/** The newest run directory under `parent` (run ids sort by time). */
function newestRun(parent: string): string | undefined {
  if (!existsSync(parent)) return undefined;
  const runs = readdirSync(parent, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(parent, entry.name, "metadata.json")))
    .map((entry) => entry.name)
    .sort();
  return runs.length > 0 ? join(parent, runs[runs.length - 1] as string) : undefined;
}

/** The `mode` key of an environment config (multihop QA), recorded so reports name the mode of every number. */
function configMode(config: unknown): string | null {
  const mode = (config as { mode?: unknown } | null)?.mode;
  return typeof mode === "string" ? mode : null;
}

/** Runs one (row, model) pair into its run directory. */
async function runOne(row: EvaluationRow, spec: ModelSpec, options: RunEvaluationOptions): Promise<RunSummary> {
  const { env, config, split, seed, n } = row;
  const samples = row.samples ?? 1;
  const model = prepareModel(spec, env);
  const firstTask = env.generate({ split, seed, index: 0, config });
  const firstEpisode = env.start(firstTask);
  const generation = generationPath({
    sampling: model.sampling,
    chatTemplateKwargs: model.chatTemplateKwargs,
    chatTemplateHash: model.chatTemplateHash,
    maxTurns: row.maxTurns ?? env.maxTurns(firstTask),
    toolSchemasHash: toolSchemasHash(firstEpisode.protocol === "tools" ? firstEpisode.tools : []),
    protocol: firstEpisode.protocol,
    onNoToolCall: row.onNoToolCall ?? "nudge",
  });
  const tasks = taskSetHash(env.id, split, seed, n);
  const parent = join(options.out ?? "runs", `${env.id}--${model.label}`);
  let directory: string | undefined;
  let metadata: RunMetadata | undefined;
  let previous: ResultDigest[] = [];
  if (options.resume) {
    const candidate = options.runId ? join(parent, options.runId) : newestRun(parent);
    if (candidate && existsSync(join(candidate, "metadata.json"))) {
      const existing = JSON.parse(readFileSync(join(candidate, "metadata.json"), "utf8")) as RunMetadata;
      if (
        existing.generation.fingerprint !== generation.fingerprint ||
        existing.taskSetHash !== tasks ||
        existing.env.samples !== samples ||
        existing.model.name !== model.metadata.model.name
      ) {
        throw new UsageError({
          code: "RESUME_MISMATCH",
          message: `--resume: ${candidate} was run with a different task set, model or generation path (fingerprint ${existing.generation.fingerprint}); use the same options, or drop --resume to start a new run`,
        });
      }
      directory = candidate;
      metadata = { ...existing, status: "running", finishedAt: null };
      previous = readResultsForResume(join(candidate, "results.jsonl"));
    }
  }
  if (!directory || !metadata) {
    const runId = options.runId ?? createRunId();
    directory = join(parent, runId);
    mkdirSync(directory, { recursive: true });
    metadata = {
      schemaVersion: RUN_SCHEMA_VERSION,
      runId,
      status: "running",
      toolgymVersion: TOOLGYM_VERSION,
      createdAt: new Date().toISOString(),
      finishedAt: null,
      env: {
        id: env.id,
        version: env.version,
        split,
        config: config as JsonValue,
        seed,
        n,
        samples,
        mode: row.mode ?? configMode(config),
        protocol: firstEpisode.protocol,
      },
      benchmark: row.benchmark ?? env.id,
      metrics: row.metrics ?? ["reward"],
      ...model.metadata,
      generation,
      taskSetHash: tasks,
    };
  }
  writeMetadata(directory, metadata);

  const finished = new Set(previous.map((digest) => digest.id));
  const totals = new RunTotals();
  for (const digest of previous) totals.add(digest);
  const total = n * samples;
  const progress = createProgress({ label: `${env.id} ${model.label}`, total, quiet: options.quiet, initial: finished.size });
  const writer = new ResultsWriter(join(directory, "results.jsonl"));
  let next = 0;
  const claim = (): { index: number; sample: number; id: string } | undefined => {
    while (next < total) {
      const index = Math.floor(next / samples);
      const sample = next % samples;
      next++;
      const id = `${env.id}/${split}/${seed}/${index}#${sample}`;
      if (!finished.has(id)) return { index, sample, id };
    }
    return undefined;
  };
  const worker = async () => {
    for (let item = claim(); item; item = claim()) {
      if (options.signal?.aborted) return;
      const task = env.generate({ split, seed, index: item.index, config });
      const agent = model.createAgent({ env, task, index: item.index, sample: item.sample, episodeId: item.id, split, seed });
      const startedAt = new Date();
      const trajectory = await runEpisode({
        env,
        split,
        seed,
        index: item.index,
        config,
        agent,
        task,
        maxTurns: row.maxTurns,
        onNoToolCall: row.onNoToolCall,
        signal: options.signal,
      });
      if (options.signal?.aborted && trajectory.termination === "errored") return;
      const firstReply = trajectory.messages.findIndex((message) => message.role === "assistant");
      const promptLength = firstReply === -1 ? trajectory.messages.length : firstReply;
      const record = resultFromTrajectory({
        trajectory,
        promptLength,
        sample: item.sample,
        answer: answerOf(env, task),
        startedAt: startedAt.toISOString(),
        durationMs: Date.now() - startedAt.getTime(),
      });
      // Counted only once the line is written (batched with the episodes finishing in the same tick).
      await writer.write(record);
      const digest = digestOf(record as unknown as Record<string, unknown>);
      totals.add(digest);
      progress.tick({ errored: digest.status === "errored" });
      options.onEpisode?.(digest);
    }
  };
  try {
    const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
    await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, total)) }, worker));
  } finally {
    writer.close();
    progress.stop();
    await model.pool?.close();
  }
  const summary = totals.summary({
    dir: directory,
    runId: metadata.runId,
    env: env.id,
    benchmark: metadata.benchmark,
    model: model.label,
    total,
    resumedFrom: previous.length,
  });
  if (totals.count === total) {
    metadata.status = "complete";
    metadata.finishedAt = new Date().toISOString();
    metadata.counts = { scored: summary.scored, errored: summary.errored };
    if (model.stats)
      (metadata as RunMetadata & { provider?: JsonValue }).provider = { ...model.stats, replicas: model.pool?.stats() ?? [] } as unknown as JsonValue;
    writeMetadata(directory, metadata);
    writeFileSync(join(directory, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  }
  return summary;
}

/** The gold answer of a task where the environment exposes one (`solution().answer`), else "". */
function answerOf(env: AnyEnvironment, task: unknown): string {
  try {
    const solution = env.solution(task) as { answer?: unknown } | null;
    const answer = solution && typeof solution === "object" ? solution.answer : undefined;
    return typeof answer === "string" ? answer : answer === undefined || answer === null ? "" : JSON.stringify(answer);
  } catch {
    return "";
  }
}

/**
 * Runs every (row, model) pair, one after another, each with `concurrency` episodes in flight, writing
 * `<out>/<env>--<label>/<runId>/{metadata.json, results.jsonl}` (the run-directory contract).
 * Memory stays bounded: trajectories go to disk as they finish; only small per-episode digests are kept.
 */
export async function runEvaluation(options: RunEvaluationOptions): Promise<RunSummary[]> {
  if (options.rows.length === 0) throw new UsageError({ code: "ROWS_EMPTY", message: "nothing to evaluate; pass --env ID" });
  if (options.models.length === 0) throw new UsageError({ code: "MODELS_EMPTY", message: "no model or agent to evaluate; pass --base-url and --model" });
  const summaries: RunSummary[] = [];
  for (const row of options.rows) {
    for (const model of options.models) summaries.push(await runOne(row, model, options));
  }
  return summaries;
}
