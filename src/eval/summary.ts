import type { ResultDigest } from "../runs/record.ts";
import type { RunStatus, RunSummary } from "../runs/schemas.ts";
import { bootstrapMean, inTaskOrder } from "../statistics/statistics.ts";

export type { RunSummary } from "../runs/schemas.ts";

/** The bootstrap seed of a run's reward CI: the one `toolgym report` uses for the same run's reward row. */
export function rewardIntervalSeed(benchmark: string, label: string): string {
  return `${benchmark}/reward/${label}`;
}

/**
 * Running totals of a run: each finished episode is folded in and dropped, so memory stays flat. Per task
 * only the sum and count of its scored rewards are kept, for the bootstrap interval: with the run's task
 * count known, in two typed arrays allocated once (12 bytes a task, nothing added per episode).
 */
export class RunTotals {
  count = 0;
  private readonly rewards = new Map<number, { sum: number; count: number }>();
  private readonly taskSums: Float64Array | undefined;
  private readonly taskCounts: Uint32Array | undefined;
  private readonly sums: Record<string, { sum: number; count: number }> = {};
  private readonly terminations: Record<string, number> = {};
  private readonly errors: Record<string, number> = {};
  /** The first message of each error code, to say why a run failed. */
  readonly errorMessages = new Map<string, string>();
  private readonly components = new Set<string>();
  private readonly notComputed: Record<string, number> = {};
  private turns = 0;
  private formatErrors = 0;
  private errored = 0;

  /** `tasks`: the run's task count (episodes carry task indices below it); without it a map grows per task. */
  constructor(tasks?: number) {
    if (tasks !== undefined) {
      this.taskSums = new Float64Array(tasks);
      this.taskCounts = new Uint32Array(tasks);
    }
  }

  get scored(): number {
    return this.count - this.errored;
  }

  add(digest: ResultDigest): void {
    this.count++;
    this.terminations[digest.termination] = (this.terminations[digest.termination] ?? 0) + 1;
    this.turns += digest.turns;
    this.formatErrors += digest.formatErrors;
    if (digest.status === "errored") {
      this.errored++;
      const code = digest.errorCode ?? "UNKNOWN";
      this.errors[code] = (this.errors[code] ?? 0) + 1;
      if (!this.errorMessages.has(code)) this.errorMessages.set(code, digest.errorMessage ?? "");
      return;
    }
    if (digest.reward !== null && this.taskSums && this.taskCounts && digest.exampleId < this.taskSums.length) {
      this.taskSums[digest.exampleId]! += digest.reward;
      this.taskCounts[digest.exampleId]!++;
    } else if (digest.reward !== null) {
      const task = this.rewards.get(digest.exampleId) ?? { sum: 0, count: 0 };
      task.sum += digest.reward;
      task.count++;
      this.rewards.set(digest.exampleId, task);
    }
    for (const name of digest.components) this.components.add(name);
    for (const name of digest.notComputed ?? []) this.notComputed[name] = (this.notComputed[name] ?? 0) + 1;
    for (const [name, value] of Object.entries(digest.metrics)) {
      if (typeof value !== "number") continue;
      const entry = (this.sums[name] ??= { sum: 0, count: 0 });
      entry.sum += value;
      entry.count++;
    }
  }

  /**
   * The run's summary. The mean reward and its CI are over tasks (a task's scored samples averaged
   * first, tasks in order), with the report's seed: summary.json and `toolgym report` agree.
   */
  summary(
    identity: Pick<RunSummary, "dir" | "runId" | "env" | "benchmark" | "model" | "total" | "resumedFrom" | "rerun">,
    status: RunStatus,
    notes: string[] = [],
  ): RunSummary {
    const perTask = this.perTaskMeans();
    const interval = perTask.length > 0 ? bootstrapMean(perTask, { seed: rewardIntervalSeed(identity.benchmark, identity.model) }) : null;
    return {
      ...identity,
      status,
      scored: this.count - this.errored,
      errored: this.errored,
      mean: interval ? interval.mean : null,
      ciLow: interval ? interval.low : null,
      ciHigh: interval ? interval.high : null,
      // A component some episodes could not compute gets no mean (it is listed in `notComputed` instead).
      metrics: Object.fromEntries(
        Object.entries(this.sums)
          .filter(([name]) => !this.notComputed[name])
          .map(([name, entry]) => [name, entry.sum / entry.count]),
      ),
      components: [...this.components].sort(),
      meanTurns: this.count > 0 ? this.turns / this.count : 0,
      formatErrors: this.formatErrors,
      terminations: { ...this.terminations },
      errors: { ...this.errors },
      notes,
      ...(Object.keys(this.notComputed).length > 0 ? { notComputed: { ...this.notComputed } } : {}),
    };
  }

  /** In task order: the typed arrays' tasks, then any past them (a map keyed by task index). */
  private perTaskMeans(): number[] {
    const means: number[] = [];
    if (this.taskSums && this.taskCounts)
      for (let task = 0; task < this.taskSums.length; task++) if (this.taskCounts[task]! > 0) means.push(this.taskSums[task]! / this.taskCounts[task]!);
    for (const task of inTaskOrder(this.rewards)) means.push(task.sum / task.count);
    return means;
  }
}

function fixed(value: number | null | undefined): string {
  return value === null || value === undefined || Number.isNaN(value) ? "—" : value.toFixed(3);
}

/** A plain-text table of run summaries (one line per run). */
export function formatSummaryTable(rows: readonly RunSummary[]): string {
  const metricNames = [...new Set(rows.flatMap((row) => row.components))].filter((name) => name !== "reward");
  const header = ["env", "model", "scored", "errored", "mean", "95% CI", ...metricNames, "turns", "format errors"];
  const body = rows.map((row) => [
    row.env,
    row.model,
    String(row.scored),
    String(row.errored),
    fixed(row.mean),
    row.ciLow === null ? "—" : `[${fixed(row.ciLow)}, ${fixed(row.ciHigh)}]`,
    // A component some episodes could not compute has no honest mean: the subset's would read as the run's.
    ...metricNames.map((name) => ((row.notComputed?.[name] ?? 0) > 0 ? "not computed" : fixed(row.metrics[name]))),
    row.meanTurns.toFixed(1),
    String(row.formatErrors),
  ]);
  const widths = header.map((cell, column) => Math.max(cell.length, ...body.map((line) => (line[column] as string).length)));
  const format = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] as number))
      .join("  ")
      .trimEnd();
  return [format(header), format(widths.map((width) => "-".repeat(width))), ...body.map(format), ...basisNotes(rows)].join("\n");
}

/**
 * What the means of a run with uncomputed components stand on, one line per run: "not computed" in the
 * table is never a number, and the mean reward then covers only the components that were computed.
 */
export function basisNotes(rows: readonly RunSummary[]): string[] {
  return rows
    .filter((row) => Object.keys(row.notComputed ?? {}).length > 0)
    .map(
      (row) =>
        `${row.env} ${row.model}: ${Object.entries(row.notComputed ?? {})
          .map(([name, count]) => `${name} not computed in ${count} of ${row.scored} scored episodes`)
          .join(", ")}; the mean is over the components that were computed, and such episodes never count as a pass`,
    );
}
