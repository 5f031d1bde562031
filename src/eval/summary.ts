import type { ResultDigest } from "./results-file.ts";
import { bootstrapMean } from "./statistics.ts";

/** One (environment, model) run: counts, the mean reward over scored episodes, and metric means. */
export interface RunSummary {
  dir: string;
  runId: string;
  env: string;
  benchmark: string;
  model: string;
  total: number;
  scored: number;
  errored: number;
  /** Episodes already on disk when the run started (--resume). */
  resumedFrom: number;
  mean: number | null;
  ciLow: number | null;
  ciHigh: number | null;
  metrics: Record<string, number>;
  /** Reward component names (a subset of `metrics`; the others are diagnostics). */
  components: string[];
  meanTurns: number;
  formatErrors: number;
  terminations: Record<string, number>;
  /** Errored episodes by error code (listed separately, never averaged in). */
  errors: Record<string, number>;
}

/**
 * Running totals of a run: each finished episode is folded in and dropped, so memory stays flat (only
 * the scored rewards are kept, 8 bytes each, for the bootstrap interval).
 */
export class RunTotals {
  count = 0;
  private readonly rewards: number[] = [];
  private readonly sums: Record<string, { sum: number; count: number }> = {};
  private readonly terminations: Record<string, number> = {};
  private readonly errors: Record<string, number> = {};
  private readonly components = new Set<string>();
  private turns = 0;
  private formatErrors = 0;
  private errored = 0;

  add(digest: ResultDigest): void {
    this.count++;
    this.terminations[digest.termination] = (this.terminations[digest.termination] ?? 0) + 1;
    this.turns += digest.turns;
    this.formatErrors += digest.formatErrors;
    if (digest.status === "errored") {
      this.errored++;
      const code = digest.errorCode ?? "UNKNOWN";
      this.errors[code] = (this.errors[code] ?? 0) + 1;
      return;
    }
    if (digest.reward !== null) this.rewards.push(digest.reward);
    for (const name of digest.components) this.components.add(name);
    for (const [name, value] of Object.entries(digest.metrics)) {
      if (typeof value !== "number") continue;
      const entry = (this.sums[name] ??= { sum: 0, count: 0 });
      entry.sum += value;
      entry.count++;
    }
  }

  summary(identity: Pick<RunSummary, "dir" | "runId" | "env" | "benchmark" | "model" | "total" | "resumedFrom">): RunSummary {
    const interval = this.rewards.length > 0 ? bootstrapMean(this.rewards, { seed: `${identity.env}/${identity.model}` }) : null;
    return {
      ...identity,
      scored: this.count - this.errored,
      errored: this.errored,
      mean: interval ? interval.mean : null,
      ciLow: interval ? interval.low : null,
      ciHigh: interval ? interval.high : null,
      metrics: Object.fromEntries(Object.entries(this.sums).map(([name, entry]) => [name, entry.sum / entry.count])),
      components: [...this.components].sort(),
      meanTurns: this.count > 0 ? this.turns / this.count : 0,
      formatErrors: this.formatErrors,
      terminations: { ...this.terminations },
      errors: { ...this.errors },
    };
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
    ...metricNames.map((name) => fixed(row.metrics[name])),
    row.meanTurns.toFixed(1),
    String(row.formatErrors),
  ]);
  const widths = header.map((cell, column) => Math.max(cell.length, ...body.map((line) => (line[column] as string).length)));
  const format = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] as number))
      .join("  ")
      .trimEnd();
  return [format(header), format(widths.map((width) => "-".repeat(width))), ...body.map(format)].join("\n");
}
