import { UsageError } from "../../core/index.ts";
import type { ResultRecord } from "../../runs/schemas.ts";
import { NOT_AVAILABLE } from "../suites/run-suite.ts";
import { buildBreakdown, type Breakdown } from "./breakdown.ts";
import { getEnvironment, isEnvironmentId } from "../../envs/registry.ts";
import { rewardComponentNames } from "./chart-data.ts";
import { findingSentence } from "./findings.ts";
import { attachSummary, type RowSummary } from "./summary.ts";
import type { LoadedInputs, LoadedRun } from "./load.ts";
import { findMismatches, refuseMismatches, type Mismatch } from "./mismatch.ts";
import { CONFIDENCE, bootstrapMean, compareTasks, holmAdjust, inTaskOrder, isBinary, mean, type PairedDifference } from "../../statistics/statistics.ts";

export const ALPHA = 0.05;

export interface ReportCell {
  model: string;
  mean: number;
  low: number;
  high: number;
  /** Tasks with a value (errored episodes excluded). */
  n: number;
  errored: number;
  /** Scored episodes that lack this metric. */
  missing: number;
  /** Scored episodes whose environment could not compute this metric (results' `not_computed`): the cell then has no mean (NaN). */
  notComputed: number;
  directory: string;
}

export interface ReportComparison extends PairedDifference {
  baseline: string;
  treatment: string;
  pHolm: number;
  significant: boolean;
}

export interface ReportRow {
  benchmark: string;
  title: string;
  metric: string;
  env: string;
  mode: string | null;
  split: string | null;
  status: "ok" | typeof NOT_AVAILABLE | "no runs";
  reason: string | null;
  cells: ReportCell[];
  comparisons: ReportComparison[];
  finding: string;
  notes: string[];
  /** Sub-rows by a diagnostics key (babyai: per task), on the benchmark's last metric row only. */
  breakdown?: Breakdown;
  /** The environment's own summary per model (definition `summary`); the first model's is also under `row[summary.key]`. */
  summary?: RowSummary;
}

export interface ReportRun {
  benchmark: string;
  model: string;
  name: string;
  agent: string;
  directory: string;
  status: string;
  env: LoadedRun["metadata"]["env"];
  generation: LoadedRun["metadata"]["generation"];
  scored: number;
  errored: number;
  meanTurns: number;
  turns: number[];
  /** The smallest and largest per-episode turn limit (each trajectory's own; tasks may differ), null when none records one. */
  turnLimits: { min: number; max: number } | null;
  /** Mean of each metric over scored episodes; a component some episode could not compute is left out (see `notComputed`). */
  components: Record<string, number>;
  /** Which keys of `components` are reward components (from the trajectories); the rest are diagnostics. */
  rewardComponents: string[];
  /** Scored episodes lacking each component that was not computed (results' `not_computed`). */
  notComputed: Record<string, number>;
  notes: string[];
}

export interface Report {
  schemaVersion: 1;
  createdAt: string;
  suite: string | null;
  models: string[];
  confidence: number;
  alpha: number;
  correction: "holm";
  rows: ReportRow[];
  runs: ReportRun[];
  mismatches: Mismatch[];
  mismatchAllowed: boolean;
  errored: Array<{ benchmark: string; model: string; id: string; code: string; message: string }>;
  /**
   * Scored episodes that ended on a model failure the server reported (context overflow, content filter, a
   * reply over the cap), per run and termination: in the means, as the model's failures.
   */
  modelFailures: Array<{ benchmark: string; model: string; termination: string; count: number }>;
}

/** Terminations of an episode its model failed through its server's answer (scored, never errored). */
export const MODEL_FAILURE_TERMINATIONS = ["prompt_too_long", "content_filter", "reply_too_large"];

/** The value of one metric in a result: `reward` is the total, anything else a key of `metrics`. */
function metricValue(result: ResultRecord, metric: string): number | undefined {
  const value = metric === "reward" ? result.reward : result.metrics?.[metric];
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** Per-task values (mean over scored samples), keyed by example id. */
function taskValues(run: LoadedRun, metric: string): { values: Map<string, number>; missing: number; single: boolean } {
  const byTask = new Map<string, number[]>();
  let missing = 0;
  for (const result of run.results) {
    if (result.status !== "scored") continue;
    const value = metricValue(result, metric);
    if (value === undefined) {
      missing++;
      continue;
    }
    const key = String(result.example_id ?? result.id);
    (byTask.get(key) ?? byTask.set(key, []).get(key)!).push(value);
  }
  const values = new Map<string, number>();
  let single = true;
  for (const [key, list] of byTask) {
    if (list.length > 1) single = false;
    values.set(key, mean(list));
  }
  return { values, missing, single };
}

/** Each episode's turn limit as its trajectory recorded it (the metadata holds only the first task's). */
function turnLimits(results: readonly ResultRecord[]): { min: number; max: number } | null {
  let min = Infinity;
  let max = -Infinity;
  for (const result of results) {
    const trajectory = result.info.trajectory as { maxTurns?: unknown } | null | undefined;
    const limit = trajectory && typeof trajectory === "object" ? trajectory.maxTurns : undefined;
    if (typeof limit !== "number") continue;
    min = Math.min(min, limit);
    max = Math.max(max, limit);
  }
  return min <= max ? { min, max } : null;
}

/** Scored episodes per component the environment could not compute (results' `not_computed`). */
function notComputedCounts(results: readonly ResultRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) if (result.status === "scored") for (const name of result.not_computed ?? []) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

function summarizeRun(benchmark: string, run: LoadedRun): ReportRun {
  const scored = run.results.filter((result) => result.status === "scored");
  const notComputed = notComputedCounts(run.results);
  const components: Record<string, number[]> = {};
  for (const result of scored)
    for (const [name, value] of Object.entries(result.metrics ?? {}))
      if (typeof value === "number" && !notComputed[name]) (components[name] ??= []).push(value);
  const turns = run.results.map((result) => result.turns).filter((value) => typeof value === "number");
  const metadata = run.metadata;
  return {
    benchmark,
    model: metadata.model.label,
    name: metadata.model.name,
    agent: `${metadata.agent?.kind ?? "?"}:${metadata.agent?.id ?? "?"}`,
    directory: run.directory,
    status: metadata.status,
    env: metadata.env,
    generation: metadata.generation,
    scored: scored.length,
    errored: run.results.length - scored.length,
    meanTurns: mean(turns),
    turns,
    turnLimits: turnLimits(run.results),
    components: Object.fromEntries(Object.entries(components).map(([name, values]) => [name, mean(values)])),
    rewardComponents: rewardComponentNames(run.results),
    notComputed,
    notes: run.notes,
  };
}

/**
 * Builds the report: one row per (benchmark, metric), one cell per model with its bootstrap CI, and for
 * every model after the first the paired difference against the first, Holm-corrected across rows.
 * Runs whose generation paths differ are refused unless `allowMismatch` (their numbers are not the same
 * experiment). Runs of one benchmark over different task sets (a quick suite beside a 40-task eval) keep
 * their own cells and CIs but are not paired: no comparison, and a note says why; `allowMismatch`
 * compares them anyway over the tasks they share.
 */
export function buildReport(inputs: LoadedInputs, options: { allowMismatch?: boolean } = {}): Report {
  const manifestRows = inputs.manifests.flatMap(({ manifest }) => manifest.rows);
  const modelOrder: string[] = [];
  for (const { manifest } of inputs.manifests) for (const label of manifest.models) if (!modelOrder.includes(label)) modelOrder.push(label);
  const byBenchmark = new Map<string, LoadedRun[]>();
  for (const row of manifestRows) if (!byBenchmark.has(row.benchmark)) byBenchmark.set(row.benchmark, []);
  for (const run of inputs.runs) {
    const label = run.metadata.model.label;
    if (!modelOrder.includes(label)) modelOrder.push(label);
    const list = byBenchmark.get(run.metadata.benchmark) ?? byBenchmark.set(run.metadata.benchmark, []).get(run.metadata.benchmark)!;
    const duplicate = list.find((other) => other.metadata.model.label === label);
    if (duplicate) {
      throw new UsageError({
        code: "REPORT_DUPLICATE_RUN",
        message: `two runs of ${run.metadata.benchmark} for model '${label}': ${duplicate.directory} and ${run.directory}; pass only one of them`,
      });
    }
    list.push(run);
  }
  for (const list of byBenchmark.values()) list.sort((a, b) => modelOrder.indexOf(a.metadata.model.label) - modelOrder.indexOf(b.metadata.model.label));

  const mismatches: Mismatch[] = [];
  for (const [benchmark, list] of byBenchmark) for (const other of list.slice(1)) mismatches.push(...findMismatches(benchmark, list[0] as LoadedRun, other));
  const generationMismatches = mismatches.filter((mismatch) => mismatch.kind === "generation");
  if (generationMismatches.length > 0 && !options.allowMismatch) refuseMismatches(mismatches);
  /** `benchmark\0label` of the runs that are not paired with their benchmark's first run (another task set). */
  const unpaired = new Map<string, Mismatch[]>();
  if (!options.allowMismatch)
    for (const mismatch of mismatches) {
      const key = `${mismatch.benchmark}\u0000${mismatch.other}`;
      unpaired.set(key, [...(unpaired.get(key) ?? []), mismatch]);
    }

  const rows: ReportRow[] = [];
  const runs: ReportRun[] = [];
  for (const [benchmark, list] of byBenchmark) {
    const manifestRow = manifestRows.find((row) => row.benchmark === benchmark);
    const first = list[0];
    const metrics = first?.metadata.metrics ?? manifestRow?.metrics ?? ["reward"];
    const base = {
      benchmark,
      title: manifestRow?.title ?? benchmark,
      env: first?.metadata.env.id ?? manifestRow?.env ?? benchmark,
      mode: first?.metadata.env.mode ?? (typeof manifestRow?.config?.mode === "string" ? manifestRow.config.mode : null),
      split: first?.metadata.env.split ?? manifestRow?.split ?? null,
    };
    if (!first) {
      const status = manifestRow?.status === NOT_AVAILABLE ? NOT_AVAILABLE : "no runs";
      const reason = manifestRow?.reason ?? "no run directory was found for this benchmark";
      for (const metric of metrics)
        rows.push({ ...base, metric, status, reason, cells: [], comparisons: [], finding: `not evaluated: ${status} (${reason})`, notes: [] });
      continue;
    }
    for (const run of list) runs.push(summarizeRun(benchmark, run));
    const rowMismatches = mismatches.filter((mismatch) => mismatch.benchmark === benchmark);
    for (const metric of metrics) {
      const perRun = list.map((run) => ({ run, ...taskValues(run, metric) }));
      const cells: ReportCell[] = perRun.map(({ run, values, missing }) => {
        // A metric some episodes could not compute has no mean: the others' would read as the run's.
        const notComputed = notComputedCounts(run.results)[metric] ?? 0;
        const interval = notComputed > 0 ? null : bootstrapMean(inTaskOrder(values), { seed: `${benchmark}/${metric}/${run.metadata.model.label}` });
        return {
          model: run.metadata.model.label,
          mean: interval ? interval.mean : Number.NaN,
          low: interval ? interval.low : Number.NaN,
          high: interval ? interval.high : Number.NaN,
          n: values.size,
          errored: run.results.filter((result) => result.status === "errored").length,
          missing: notComputed > 0 ? 0 : missing,
          notComputed,
          directory: run.directory,
        };
      });
      const baseline = perRun[0] as (typeof perRun)[number];
      const paired = perRun.slice(1).filter((treatment) => !unpaired.has(`${benchmark}\u0000${treatment.run.metadata.model.label}`));
      const comparisons: ReportComparison[] = paired.map((treatment) => {
        const keys = [...baseline.values.keys()].filter((key) => treatment.values.has(key)).sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
        const left = keys.map((key) => baseline.values.get(key) as number);
        const right = keys.map((key) => treatment.values.get(key) as number);
        const binary = baseline.single && treatment.single && isBinary(left) && isBinary(right);
        const difference = compareTasks(left, right, { seed: `${benchmark}/${metric}/${treatment.run.metadata.model.label}`, binary });
        return {
          ...difference,
          baseline: baseline.run.metadata.model.label,
          treatment: treatment.run.metadata.model.label,
          pHolm: Number.NaN,
          significant: false,
        };
      });
      const notes = [...new Set(list.flatMap((run) => run.notes.map((note) => `${run.metadata.model.label}: ${note}`)))];
      for (const cell of cells) if (cell.missing > 0) notes.push(`${cell.model}: ${cell.missing} scored episodes have no '${metric}' value`);
      if (metric === "reward")
        for (const run of list)
          for (const [name, count] of Object.entries(notComputedCounts(run.results)))
            notes.push(
              `${run.metadata.model.label}: ${name} was not computed in ${count} scored episodes; their reward is over the components that were computed, and they never count as a pass`,
            );
      for (const treatment of perRun.slice(1)) {
        const differences = unpaired.get(`${benchmark}\u0000${treatment.run.metadata.model.label}`);
        if (differences)
          notes.push(
            `${treatment.run.metadata.model.label} is not compared with ${baseline.run.metadata.model.label}: different task sets (${differences
              .filter((difference) => difference.field !== "taskSetHash")
              .map((difference) => `${difference.field}: ${difference.detail}`)
              .join("; ")}); each has its own CI`,
          );
      }
      if (rowMismatches.length > 0 && options.allowMismatch)
        notes.push(`compared despite mismatches (--allow-mismatch): ${[...new Set(rowMismatches.map((mismatch) => mismatch.field))].join(", ")}`);
      rows.push({ ...base, metric, status: "ok", reason: null, cells, comparisons, finding: "", notes });
    }
    const spec = isEnvironmentId(base.env) ? getEnvironment(base.env).breakdown : undefined;
    const breakdown = spec ? buildBreakdown(benchmark, list, spec) : undefined;
    if (breakdown) {
      const last = rows.at(-1) as ReportRow;
      last.breakdown = breakdown;
      last.notes.push(
        `sub-rows per ${breakdown.key} (from each episode's diagnostics.${breakdown.key}; ${breakdown.protocols.join("/")} protocol) show ${breakdown.metrics.join(" and ")} with 95% bootstrap CIs; they are descriptive, not tested`,
      );
    }
    const benchmarkRows = rows.filter((row) => row.benchmark === benchmark);
    attachSummary(benchmarkRows, base.env, list);
  }

  // Holm across rows, separately for each (baseline, treatment) pair.
  const pairs = new Set(rows.flatMap((row) => row.comparisons.map((comparison) => `${comparison.baseline}\u0000${comparison.treatment}`)));
  for (const pair of pairs) {
    const members = rows.flatMap((row) => row.comparisons.filter((comparison) => `${comparison.baseline}\u0000${comparison.treatment}` === pair));
    const adjusted = holmAdjust(members.map((comparison) => comparison.pValue));
    members.forEach((comparison, index) => {
      comparison.pHolm = adjusted[index] as number;
      comparison.significant = Number.isFinite(comparison.pHolm) && comparison.pHolm < ALPHA;
    });
  }
  for (const row of rows) if (row.status === "ok") row.finding = findingSentence(row);

  const errored = inputs.runs.flatMap((run) =>
    run.results
      .filter((result) => result.status === "errored")
      .map((result) => ({
        benchmark: run.metadata.benchmark,
        model: run.metadata.model.label,
        id: result.id,
        code: result.error?.code ?? "UNKNOWN",
        message: result.error?.message ?? "no error record",
      })),
  );
  const modelFailures = inputs.runs.flatMap((run) =>
    MODEL_FAILURE_TERMINATIONS.map((termination) => ({
      benchmark: run.metadata.benchmark,
      model: run.metadata.model.label,
      termination,
      count: run.results.filter((result) => result.status === "scored" && result.termination === termination).length,
    })).filter((entry) => entry.count > 0),
  );
  return {
    schemaVersion: 1,
    createdAt: new Date().toISOString(),
    suite: inputs.manifests[0]?.manifest.suite ?? null,
    models: modelOrder.filter((label) => runs.some((run) => run.model === label)),
    confidence: CONFIDENCE,
    alpha: ALPHA,
    correction: "holm",
    rows,
    runs,
    mismatches,
    mismatchAllowed: mismatches.length > 0 && (options.allowMismatch ?? false),
    errored,
    modelFailures,
  };
}
