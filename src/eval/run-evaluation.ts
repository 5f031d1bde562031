import { join } from "node:path";
import { UsageError, type JsonValue, type SummaryEpisode } from "../core/index.ts";
import { RESULTS_FILE, scanResults } from "../runs/reader.ts";
import { digestOf, type ResultDigest } from "../runs/record.ts";
import type { RunMetadata, RunSummary } from "../runs/schemas.ts";
import { existsSync } from "node:fs";
import { checkPathComponent } from "../runs/identity.ts";
import { createRun, newRunMetadata, openResults, runDirectory, runExistsError, runParent, writeMetadata, type ResultsWriter } from "../runs/writer.ts";
import { prepareModel, type ModelSpec, type PreparedModel } from "./agent-factory.ts";
import { checkRunUnlocked, lockRun, type RunLock } from "../runs/lock.ts";
import { summaryEpisodeOf } from "./benchmark-summary.ts";
import { completeRun, markRunFailed } from "./completion.ts";
import { pendingEpisodes, playEpisode } from "./episode.ts";
import { createProgress, type ProgressStream } from "./progress.ts";
import { findRunToResume, readResumedResults } from "./resume.ts";
import { describeRun, type EvaluationRow } from "./run-metadata.ts";
import { RunTotals } from "./summary.ts";
import { runOnThreads } from "./thread-pool.ts";
import { runPool } from "./worker-pool.ts";

export { modelLabel, type ModelSpec } from "./agent-factory.ts";
export type { EvaluationRow } from "./run-metadata.ts";
export { formatSummaryTable, type RunSummary } from "./summary.ts";

export interface RunEvaluationOptions {
  rows: EvaluationRow[];
  models: ModelSpec[];
  /** Root directory (default `runs`). */
  out?: string;
  /** Episodes in flight (default 64), over all worker threads together. */
  concurrency?: number;
  /**
   * Worker threads playing the episodes (default 1: in this thread). With more, the episodes are sharded
   * over threads and this thread only writes results.jsonl; the environments must be the registered ones.
   */
  workers?: number;
  resume?: boolean;
  /** With `resume`: keep the run's errored episodes instead of playing them again. */
  keepErrored?: boolean;
  runId?: string;
  /** Where the progress bar is drawn (none without a stream). */
  progress?: ProgressStream;
  /** No progress bar even with a stream. */
  quiet?: boolean;
  signal?: AbortSignal;
  /** Called after each finished episode is on disk (tests, benchmarks). A throw cancels the run. */
  onEpisode?: (digest: ResultDigest) => void;
}

export const DEFAULT_CONCURRENCY = 64;

/**
 * The most episodes (tasks × samples) one run may have. A run keeps a running total per task for its
 * confidence interval and hashes the list of every task id into its metadata, so its memory grows with
 * the task count; past this, split the evaluation over seeds (`--seed`) instead.
 */
export const MAX_EPISODES_PER_RUN = 1_000_000;

/** The refusal of a row with too many episodes, as a usage error naming the options. */
export function checkEpisodeCount(envId: string, n: number, samples: number): void {
  if (n * samples <= MAX_EPISODES_PER_RUN) return;
  throw new UsageError({
    code: "N_TOO_LARGE",
    message: `${envId}: --n ${n}${samples > 1 ? ` × --num-trials ${samples}` : ""} is more than ${MAX_EPISODES_PER_RUN.toLocaleString("en-US")} episodes in one run (a run keeps a total per task in memory and hashes every task id); run several seeds (--seed) instead`,
  });
}
export { defaultWorkers, MAX_WORKERS } from "./thread-pool.ts";

/**
 * The run directory to write into, locked for this process: the one to resume (its results read once the
 * lock is held, so a second writer never rewrites them), or a new one.
 */
function openRunDirectory(row: EvaluationRow, model: ReturnType<typeof prepareModel>, options: RunEvaluationOptions) {
  const root = options.out ?? "runs";
  const description = describeRun(row, model);
  if (options.resume) {
    const found = findRunToResume(runParent(root, row.env.id, model.label), options.runId, description, { readResults: false });
    if (found) {
      const lock = lockRun(found.directory);
      try {
        const resumed = { ...found, ...readResumedResults(found.directory, { keepErrored: options.keepErrored }) };
        if (lock.note) resumed.notes.push(lock.note);
        writeMetadata(resumed.directory, resumed.metadata);
        return { ...resumed, results: openResults(resumed.directory), lock };
      } catch (error) {
        lock.release();
        throw error;
      }
    }
  }
  const metadata = newRunMetadata(description, options.runId);
  const { directory, results } = createRun(root, metadata);
  const lock = lockRun(directory);
  return { directory, metadata, results, previous: [] as ResultDigest[], notes: [] as string[], rerun: 0, lock };
}

/**
 * Everything that can be refused is refused before the first episode of the first pair: every
 * environment's agent (a scripted agent the second environment lacks), the episode count, the run id
 * and labels as directory names, a run directory that exists without --resume, two pairs that would
 * share one directory, and (with --resume) a run on disk with other settings.
 */
export async function checkEvaluation(options: Pick<RunEvaluationOptions, "rows" | "models" | "out" | "runId" | "resume">): Promise<void> {
  const root = options.out ?? "runs";
  if (options.runId !== undefined) checkPathComponent("--run-id", options.runId);
  const planned = new Set<string>();
  for (const row of options.rows) {
    checkEpisodeCount(row.env.id, row.n, row.samples ?? 1);
    for (const spec of options.models) {
      const model = prepareModel(spec, row.env);
      try {
        checkPathComponent("model label", model.label);
        if (options.runId === undefined) continue;
        const directory = runDirectory(root, row.env.id, model.label, options.runId);
        if (planned.has(directory))
          throw new UsageError({
            code: "OPTION_CONFLICT",
            message: `two runs of this command would share ${directory}; drop --run-id or evaluate them separately`,
          });
        planned.add(directory);
        if (!options.resume && existsSync(directory)) throw runExistsError(directory);
        if (options.resume) {
          const found = findRunToResume(runParent(root, row.env.id, model.label), options.runId, describeRun(row, model), { readResults: false });
          if (found) checkRunUnlocked(found.directory);
        }
      } finally {
        await model.pool?.close();
      }
    }
  }
}

/** Runs one (row, model) pair into its run directory. */
async function runOne(row: EvaluationRow, spec: ModelSpec, options: RunEvaluationOptions): Promise<RunSummary> {
  const model = prepareModel(spec, row.env);
  let run: { directory: string; metadata: RunMetadata; results: ResultsWriter; previous: ResultDigest[]; notes: string[]; rerun: number; lock: RunLock };
  try {
    run = openRunDirectory(row, model, options);
  } catch (error) {
    await model.pool?.close();
    throw error;
  }
  const { directory, metadata, results } = run;
  // What the environment notes about its data (records skipped while loading) belongs to the run.
  for (const note of row.env.notes?.({ split: row.split, config: row.config }) ?? []) if (!run.notes.includes(note)) run.notes.push(note);
  const totals = new RunTotals(row.n);
  for (const digest of run.previous) totals.add(digest);
  const total = row.n * (row.samples ?? 1);
  // Failed model-call attempts: this thread's client's, or what the worker threads last reported.
  let threadRetries = 0;
  const progress = createProgress({
    label: `${row.env.id} ${model.label}`,
    total,
    stream: options.quiet ? undefined : options.progress,
    initial: totals.count,
    retries: () => threadRetries + (model.stats?.failedAttempts ?? 0),
  });
  // Counted only once the line is written (batched with the episodes finishing in the same tick).
  const count = (digest: ResultDigest) => {
    totals.add(digest);
    progress.tick({ errored: digest.status === "errored" });
    options.onEpisode?.(digest);
  };
  const { count: pending, slots } = pendingEpisodes(row, new Set(run.previous.map((digest) => digest.id)));
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  let threaded: Awaited<ReturnType<typeof runOnThreads>> | undefined;
  try {
    if ((options.workers ?? 1) > 1 && pending > 0) {
      const onRetries = (count: number) => (threadRetries = count);
      threaded = await runOnThreads(
        { row, spec, slots, pending, workers: options.workers ?? 1, concurrency, signal: options.signal, onRetries },
        async (line, digest) => {
          await results.writeLine(line);
          count(digest);
        },
      );
    } else {
      await runPool(slots, { concurrency, signal: options.signal }, async (slot, signal) => {
        const record = await playEpisode(row, model, slot, signal);
        if (!record) return;
        await results.write(record);
        count(digestOf(record));
      });
    }
  } catch (error) {
    // Every started episode has settled (the pool waits for them), so nothing writes after the close below.
    markRunFailed(directory, metadata, error);
    run.lock.release();
    throw error;
  } finally {
    results.close();
    progress.stop();
    await model.pool?.close();
  }
  try {
    return finishOne(row, model, run, totals, total, threaded);
  } finally {
    run.lock.release();
  }
}

/** Writes the end of one run (interrupted, or complete with its summary) while its lock is still held. */
function finishOne(
  row: EvaluationRow,
  model: PreparedModel,
  run: { directory: string; metadata: RunMetadata; previous: ResultDigest[]; notes: string[]; rerun: number },
  totals: RunTotals,
  total: number,
  threaded: Awaited<ReturnType<typeof runOnThreads>> | undefined,
): RunSummary {
  const { directory, metadata } = run;
  const identity = {
    dir: directory,
    runId: metadata.runId,
    env: row.env.id,
    benchmark: metadata.benchmark,
    model: model.label,
    total,
    resumedFrom: run.previous.length,
    ...(run.rerun > 0 ? { rerun: run.rerun } : {}),
  };
  // Stopped early on request: the run says so, to be resumed; summary.json waits for the end.
  if (totals.count !== total) {
    writeMetadata(directory, { ...metadata, status: "interrupted" });
    return totals.summary(identity, "interrupted", run.notes);
  }
  // With worker threads each had its own client; their counters are summed (the client here sent nothing).
  const stats = threaded ? threaded.stats : model.stats;
  const replicas = threaded ? threaded.replicas : (model.pool?.stats() ?? []);
  const provider = stats ? ({ ...stats, replicas } as unknown as JsonValue) : undefined;
  const benchmark = ownSummary(row, directory);
  return completeRun({
    directory,
    metadata,
    totals,
    identity,
    notes: run.notes,
    ...(provider !== undefined ? { provider } : {}),
    ...(benchmark ? { benchmark } : {}),
  }).summary;
}

/**
 * The environment's own summary of a finished run (e.g. tau2's pass^k), from results.jsonl as written
 * (resumed episodes included); each line is reduced to what the hook reads as it is scanned.
 */
function ownSummary(row: EvaluationRow, directory: string): { key: string; value: JsonValue } | undefined {
  const spec = row.env.summary;
  if (!spec) return undefined;
  const episodes: SummaryEpisode[] = [];
  scanResults(join(directory, RESULTS_FILE), (record) => {
    if (record.status === "scored") episodes.push(summaryEpisodeOf(record));
  });
  return { key: spec.key, value: spec.summarize(episodes) as JsonValue };
}

/**
 * Runs every (row, model) pair, one after another, each with `concurrency` episodes in flight, writing
 * `<out>/<env>--<label>/<runId>/{metadata.json, results.jsonl, summary.json}` (the run format, src/runs).
 * Memory stays bounded: trajectories go to disk as they finish; only small per-episode digests are kept.
 * A run in which every episode errored (a dead model server) ends with status `failed` (in its summary
 * and metadata.json, with the error codes and first messages), for the caller to turn into an exit code.
 * A harness error (a results file that cannot be written) cancels the run's other episodes, marks it
 * `failed` and is rethrown.
 */
export async function runEvaluation(options: RunEvaluationOptions): Promise<RunSummary[]> {
  if (options.rows.length === 0) throw new UsageError({ code: "ROWS_EMPTY", message: "nothing to evaluate; name at least one environment" });
  if (options.models.length === 0)
    throw new UsageError({ code: "MODELS_EMPTY", message: "no model or agent to evaluate; give a model (base URL and name) or a scripted agent" });
  await checkEvaluation(options);
  const summaries: RunSummary[] = [];
  for (const row of options.rows) {
    for (const model of options.models) summaries.push(await runOne(row, model, options));
  }
  return summaries;
}
