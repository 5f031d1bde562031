import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  DataError,
  ToolgymError,
  UsageError,
  parseConfig,
  type AnyEnvironment,
  type AssistantMessage,
  type EpisodeContext,
  type JsonValue,
  type SummaryEpisode,
  type Trajectory,
} from "../core/index.ts";
import { RESULTS_FILE, readResultsForResume, readRun, scanResults } from "../runs/reader.ts";
import { digestOf, resultFromTrajectory, type ResultDigest } from "../runs/record.ts";
import type { ResultRecord, RunMetadata } from "../runs/schemas.ts";
import { createRun, newRunMetadata, openResults, runDirectory } from "../runs/writer.ts";
import { runEpisode } from "../rollout/run-episode.ts";
import { summaryEpisodeOf } from "./benchmark-summary.ts";
import { completeRun, markRunFailed } from "./completion.ts";
import { RunTotals, type RunSummary } from "./summary.ts";

/**
 * `toolgym rescore`: re-grades a saved run's recorded conversations with the current version of its
 * environment into a new run of the run format beside it (model label `<label>.rescored`, same run id and
 * episode ids, so `toolgym report` pairs the two). Environments with a `rescore` hook grade the record
 * (tau2: its evaluator over the message list, NL assertions with the judge given now); any other replays
 * the recorded agent messages through a fresh episode. Errored episodes are copied as they are.
 */
export interface RescoreOptions {
  /** The run directory to re-grade. */
  directory: string;
  env: AnyEnvironment;
  /** tau2's judge (URL#NAME) for NL assertions, merged into the run's config as `judge_model`. */
  judgeModel?: string;
  /** Root of the new run (default: the root the run is in). */
  out?: string;
  /** Continue a rescore that stopped part way (its episodes on disk are kept). */
  resume?: boolean;
}

export interface RescoreResult {
  directory: string;
  summary: RunSummary;
  /** The original run's mean (null when not computed) and how many episodes' rewards changed. */
  originalMean: number | null;
  changed: number;
}

export const RESCORED_SUFFIX = ".rescored";

/** The run's config with the grading options of this rescore merged in, checked by the environment's schema. */
function gradingConfig(env: AnyEnvironment, config: JsonValue, judgeModel: string | undefined): unknown {
  if (judgeModel === undefined) return parseConfig(env.id, env.configSchema, config);
  const shape = (env.configSchema as { shape?: Record<string, unknown> }).shape;
  if (!shape || !("judge_model" in shape))
    throw new UsageError({ code: "OPTION_UNSUPPORTED", message: `${env.id} has no judge (its config has no judge_model); drop --judge-model` });
  return parseConfig(env.id, env.configSchema, { ...(config as Record<string, JsonValue>), judge_model: judgeModel });
}

/** The recorded agent messages, played back in order; an empty message once they run out. */
function playback(trajectory: Trajectory, id: string) {
  const messages = trajectory.messages.filter((message): message is AssistantMessage => message.role === "assistant");
  let next = 0;
  return { id, act: async () => ({ message: messages[next++] ?? { role: "assistant" as const, content: "" } }) };
}

async function rescoreRecord(env: AnyEnvironment, config: unknown, metadata: RunMetadata, record: ResultRecord): Promise<ResultRecord> {
  if (record.status === "errored") return record;
  const recorded = record.info.trajectory as unknown as Trajectory;
  const { split, seed } = metadata.env;
  const index = record.example_id;
  const task = env.generate({ split, seed, index, config });
  const context: EpisodeContext | undefined = record.trial_seed !== undefined ? { trial: record.trial ?? record.sample, seed: record.trial_seed } : undefined;
  let trajectory: Trajectory;
  if (env.rescore) {
    const reward = await env.rescore({ task, config, trajectory: recorded, ...(context ? { context } : {}) });
    trajectory = { ...recorded, env: { ...recorded.env, version: env.version }, reward };
  } else {
    const agent = playback(recorded, recorded.agent.id);
    const replayed = await runEpisode({ env, split, seed, index, config, task, agent, maxTurns: recorded.maxTurns, ...(context ? { context } : {}) });
    trajectory = { ...replayed, id: recorded.id, usage: recorded.usage };
  }
  const timing = (record.info.timing ?? {}) as { startedAt?: string; durationMs?: number };
  return resultFromTrajectory({
    trajectory,
    promptLength: record.prompt.length,
    sample: record.sample,
    ...(record.trial_seed !== undefined ? { trialSeed: record.trial_seed } : {}),
    answer: record.answer,
    startedAt: timing.startedAt ?? "",
    durationMs: timing.durationMs ?? 0,
  });
}

/** The environment's own summary (tau2's pass^k) of the new run, from its results file. */
function ownSummary(env: AnyEnvironment, directory: string): { key: string; value: JsonValue } | undefined {
  const spec = env.summary;
  if (!spec) return undefined;
  const episodes: SummaryEpisode[] = [];
  scanResults(join(directory, RESULTS_FILE), (record) => {
    if (record.status === "scored") episodes.push(summaryEpisodeOf(record));
  });
  return { key: spec.key, value: spec.summarize(episodes) as JsonValue };
}

export async function rescoreRun(options: RescoreOptions): Promise<RescoreResult> {
  const { env } = options;
  const original = readRun(options.directory);
  const source = original.metadata;
  if (source.env.id !== env.id) throw new UsageError({ code: "ENV_MISMATCH", message: `the run is of ${source.env.id}, not ${env.id}` });
  const config = gradingConfig(env, source.env.config, options.judgeModel);
  const label = `${source.model.label}${RESCORED_SUFFIX}`;
  const root = options.out ?? dirname(dirname(options.directory));
  const metadata = newRunMetadata(
    {
      env: { ...source.env, version: env.version },
      benchmark: source.benchmark,
      metrics: source.metrics,
      model: { ...source.model, label },
      agent: source.agent,
      generation: source.generation,
      taskSetHash: source.taskSetHash,
      rescore: { from: source.runId, directory: options.directory, envVersion: source.env.version, judgeModel: options.judgeModel ?? null },
    },
    source.runId,
  );
  const directory = runDirectory(root, env.id, label, metadata.runId);
  const totals = new RunTotals();
  const done = new Set<string>();
  let results;
  if (existsSync(directory)) {
    if (!options.resume)
      throw new UsageError({
        code: "RUN_EXISTS",
        message: `${directory} already exists (an earlier rescore); pass --resume to continue it, or --out DIR for a new one elsewhere`,
      });
    const previous = readResultsForResume(join(directory, RESULTS_FILE), (record): ResultDigest => digestOf(record));
    for (const digest of previous.results) {
      totals.add(digest);
      done.add(digest.id);
    }
    results = openResults(directory);
  } else results = createRun(root, metadata).results;
  let changed = 0;
  const before = new Map(original.results.map((record) => [record.id, record.reward]));
  try {
    for (const record of original.results) {
      if (done.has(record.id)) continue;
      const rescored = await rescoreRecord(env, config, source, record);
      results.append(rescored);
      totals.add(digestOf(rescored));
    }
  } catch (error) {
    results.close();
    markRunFailed(directory, metadata, error);
    if (ToolgymError.isInstance(error)) throw error;
    throw new DataError({
      code: "RESCORE_FAILED",
      message: `rescoring stopped: ${(error as Error).message}; fix the cause and rerun with --resume`,
      cause: error,
    });
  }
  results.close();
  scanResults(join(directory, RESULTS_FILE), (record) => {
    if (before.get(record.id) !== record.reward) changed++;
  });
  const identity = {
    dir: directory,
    runId: metadata.runId,
    env: env.id,
    benchmark: metadata.benchmark,
    model: label,
    total: original.results.length,
    resumedFrom: done.size,
  };
  const benchmark = ownSummary(env, directory);
  const { summary } = completeRun({ directory, metadata, totals, identity, notes: original.notes, ...(benchmark ? { benchmark } : {}) });
  const originalTotals = new RunTotals();
  for (const record of original.results) originalTotals.add(digestOf(record));
  const originalMean = originalTotals.summary({ ...identity, model: source.model.label }, "complete", []).mean;
  return { directory, summary, originalMean, changed };
}
