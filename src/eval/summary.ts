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
  meanTurns: number;
  formatErrors: number;
  terminations: Record<string, number>;
  /** Errored episodes by error code (listed separately, never averaged in). */
  errors: Record<string, number>;
}

export function summarizeDigests(
  digests: readonly ResultDigest[],
  identity: Pick<RunSummary, "dir" | "runId" | "env" | "benchmark" | "model" | "total" | "resumedFrom">,
): RunSummary {
  const rewards: number[] = [];
  const sums: Record<string, { sum: number; count: number }> = {};
  const terminations: Record<string, number> = {};
  const errors: Record<string, number> = {};
  let turns = 0;
  let formatErrors = 0;
  let errored = 0;
  for (const digest of digests) {
    terminations[digest.termination] = (terminations[digest.termination] ?? 0) + 1;
    turns += digest.turns;
    formatErrors += digest.formatErrors;
    if (digest.status === "errored") {
      errored++;
      errors[digest.errorCode ?? "UNKNOWN"] = (errors[digest.errorCode ?? "UNKNOWN"] ?? 0) + 1;
      continue;
    }
    if (digest.reward !== null) rewards.push(digest.reward);
    for (const [name, value] of Object.entries(digest.metrics)) {
      if (typeof value !== "number") continue;
      const entry = (sums[name] ??= { sum: 0, count: 0 });
      entry.sum += value;
      entry.count++;
    }
  }
  const interval = rewards.length > 0 ? bootstrapMean(rewards, { seed: `${identity.env}/${identity.model}` }) : null;
  return {
    ...identity,
    scored: digests.length - errored,
    errored,
    mean: interval ? interval.mean : null,
    ciLow: interval ? interval.low : null,
    ciHigh: interval ? interval.high : null,
    metrics: Object.fromEntries(Object.entries(sums).map(([name, entry]) => [name, entry.sum / entry.count])),
    meanTurns: digests.length > 0 ? turns / digests.length : 0,
    formatErrors,
    terminations,
    errors,
  };
}

function fixed(value: number | null | undefined): string {
  return value === null || value === undefined || Number.isNaN(value) ? "—" : value.toFixed(3);
}

/** A plain-text table of run summaries (one line per run). */
export function formatSummaryTable(rows: readonly RunSummary[]): string {
  const metricNames = [...new Set(rows.flatMap((row) => Object.keys(row.metrics)))].filter((name) => name !== "reward");
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
  const format = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] as number)).join("  ").trimEnd();
  return [format(header), format(widths.map((width) => "-".repeat(width))), ...body.map(format)].join("\n");
}
