import { z } from "zod";
import type { JsonValue } from "../core/index.ts";

/**
 * The run format: one directory per (environment, model) run holding
 * - `metadata.json`: what was run (environment, task set, model, generation path) and the run's status;
 * - `results.jsonl`: one result per finished episode, appended as episodes finish (any order);
 * - `summary.json`: counts and means, written once the run has stopped with every episode on disk.
 * These schemas are the contract between `toolgym eval` (the writer) and everything that reads runs
 * (report, viewer, exporters, resume). Readers keep the fields named here and drop any others.
 */
export const RUN_SCHEMA_VERSION = 1;

/** `running` while episodes are in flight (or after a kill); `failed`: every episode errored, or the harness stopped on an error. */
/** `interrupted`: stopped on request (Ctrl-C) with its episodes so far on disk; `--resume` completes it. */
export const RUN_STATUSES = ["running", "interrupted", "complete", "failed"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Any JSON value (already parsed, so only its presence is checked). */
const json = z.custom<JsonValue>((value) => value !== undefined);
const count = z.number().int().nonnegative();

export const GenerationPathSchema = z.object({
  sampling: z.record(z.string(), json).nullable(),
  chatTemplateKwargs: z.record(z.string(), json).nullable(),
  chatTemplateHash: z.string().nullable(),
  maxTurns: z.number().int().nullable(),
  toolSchemasHash: z.string(),
  protocol: z.string(),
  onNoToolCall: z.string(),
  fingerprint: z.string(),
});
export type GenerationPath = z.infer<typeof GenerationPathSchema>;

export const RunMetadataSchema = z.object({
  schemaVersion: z.literal(RUN_SCHEMA_VERSION),
  runId: z.string().min(1),
  status: z.enum(RUN_STATUSES),
  toolgymVersion: z.string(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  env: z.object({
    id: z.string().min(1),
    version: z.string(),
    split: z.string(),
    config: json,
    seed: z.number().int(),
    n: count,
    /** Trials per task (`--num-trials`; `--samples` is its older name). */
    samples: count,
    /** The seed of each trial (from `seed`, by the environment's scheme or toolgym's); absent in runs written before trials. */
    trialSeeds: z.array(z.number().int()).optional(),
    // Both were added after the first runs were written; older runs read as tools-protocol runs without a mode.
    mode: z.string().nullable().default(null),
    protocol: z.string().default("tools"),
  }),
  benchmark: z.string().min(1),
  metrics: z.array(z.string()),
  model: z.object({ label: z.string().min(1), name: z.string(), baseUrls: z.array(z.string()) }),
  agent: z.object({ kind: z.string(), id: z.string() }),
  generation: GenerationPathSchema,
  taskSetHash: z.string(),
  counts: z.object({ scored: count, errored: count }).optional(),
  /** Why a `failed` run failed (error codes with counts, or the harness error). */
  failure: z.object({ code: z.string(), message: z.string() }).optional(),
  /** Transport statistics of a model run (requests, retries, per-replica counts). */
  provider: json.optional(),
  /**
   * A run made by `toolgym rescore`: the run whose recorded episodes it re-graded (its id and directory),
   * that run's environment version, and the judge the grading used (null: none).
   */
  rescore: z.object({ from: z.string(), directory: z.string(), envVersion: z.string(), judgeModel: z.string().nullable() }).optional(),
});
export type RunMetadata = z.infer<typeof RunMetadataSchema>;

export const ResultErrorSchema = z.object({ type: z.string(), code: z.string(), message: z.string(), boundary: z.string() });

export const ResultRecordSchema = z.object({
  example_id: count,
  sample: count,
  /**
   * Which trial of the task this is (`toolgym eval --num-trials`; the same number as `sample`, which
   * runs written before trials existed have alone) and the seed that trial ran with.
   */
  trial: count.optional(),
  trial_seed: z.number().int().optional(),
  /** `<env>/<split>/<seed>/<index>#<sample>`: unique within a run. */
  id: z.string().min(1),
  task: z.string(),
  prompt: z.array(json),
  completion: z.array(json),
  answer: z.string(),
  /** The reward total; null when the episode errored. */
  reward: z.number().nullable(),
  metrics: z.record(z.string(), z.number()),
  /** Reward components that were not computed (absent from `metrics`, never a number): e.g. tau2's NL_ASSERTION without a judge. */
  not_computed: z.array(z.string()).optional(),
  status: z.enum(["scored", "errored"]),
  error: ResultErrorSchema.nullable(),
  turns: count,
  termination: z.string(),
  format_errors: count,
  info: z.record(z.string(), json),
});
export type ResultRecord = z.infer<typeof ResultRecordSchema>;

export const RunSummarySchema = z
  .object({
    dir: z.string(),
    runId: z.string(),
    status: z.enum(RUN_STATUSES),
    env: z.string(),
    benchmark: z.string(),
    model: z.string(),
    total: count,
    scored: count,
    errored: count,
    /** Episodes already on disk when the run started (--resume): scored ones, and errored ones kept with --keep-errored. */
    resumedFrom: count,
    /** Errored episodes from before --resume that were played again (absent when none were). */
    rerun: count.optional(),
    /** Mean reward over tasks (each task's scored samples averaged first) with its 95% bootstrap CI. */
    mean: z.number().nullable(),
    ciLow: z.number().nullable(),
    ciHigh: z.number().nullable(),
    metrics: z.record(z.string(), z.number()),
    /** Reward component names (a subset of `metrics`; the others are diagnostics). */
    components: z.array(z.string()),
    meanTurns: z.number(),
    formatErrors: count,
    terminations: z.record(z.string(), count),
    /** Errored episodes by error code (listed separately, never averaged in). */
    errors: z.record(z.string(), count),
    /** What the results reader worked around on resume (skipped lines, duplicates). */
    notes: z.array(z.string()),
    /**
     * Reward components that were not computed, with the number of scored episodes lacking each (e.g. tau2's
     * NL_ASSERTION without a judge): `metrics` then holds the component's mean over the other episodes only,
     * and `mean` is over what was computed. Absent in runs written before it existed.
     */
    notComputed: z.record(z.string(), count).optional(),
  })
  // The environment's own summary of the run under its key (definition `summary`, e.g. `tau2` with pass^k).
  .catchall(json);
export type RunSummary = z.infer<typeof RunSummarySchema>;
