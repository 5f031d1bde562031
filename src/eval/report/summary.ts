import type { BenchmarkSummary, SummaryEpisode } from "../../core/index.ts";
import { summaryEpisodeOf } from "../benchmark-summary.ts";
import { getEnvironment, isEnvironmentId } from "../../envs/registry.ts";
import type { LoadedRun } from "./load.ts";

/**
 * A benchmark's own summary on its report rows, from the environment definition's `summary` hook (e.g.
 * BALROG's progression % ± standard error for BabyAI). The report never names the benchmark: the hook
 * gives the JSON key and the label.
 */
export interface RowSummary {
  /** JSON field that also holds the first model's summary on the row (e.g. `row.balrog`). */
  key: string;
  /** Label in the markdown report and the card (e.g. "BALROG"). */
  label: string;
  /** Every model's summary, by model label. */
  models: Record<string, BenchmarkSummary & { model: string }>;
}

/** The scored episodes of a run as the hook reads them. */
function summaryEpisodes(run: LoadedRun): SummaryEpisode[] {
  return run.results.filter((result) => result.status === "scored").map(summaryEpisodeOf);
}

/**
 * Adds the environment's own summary to a benchmark's rows (all of them in JSON, as `row.summary` and
 * `row[key]`), and a note on its last row saying what the numbers are. Does nothing for environments
 * without the hook.
 */
export function attachSummary(rows: readonly object[], envId: string, runs: readonly LoadedRun[]): void {
  const spec = isEnvironmentId(envId) ? getEnvironment(envId).summary : undefined;
  if (!spec || rows.length === 0 || runs.length === 0) return;
  const models: RowSummary["models"] = {};
  for (const run of runs) models[run.metadata.model.label] = { model: run.metadata.model.label, ...spec.summarize(summaryEpisodes(run)) };
  const summary: RowSummary = { key: spec.key, label: spec.label, models };
  const first = Object.values(models)[0];
  for (const row of rows) Object.assign(row, { summary, [spec.key]: first });
  const last = rows.at(-1) as { notes?: string[] };
  last.notes?.push(
    `${spec.label}: the benchmark's own summary of every scored episode, computed and printed with its published formulas (JSON: \`${spec.key}\`; errored episodes are not in it)`,
  );
}

/** The summary of one model on a row, as shown beside the bootstrap CI (e.g. "BALROG babyai: 3.12% ± 3.08%, Episodes: 32"). */
export function summaryText(row: { summary?: RowSummary }, model: string): string | undefined {
  const value = row.summary?.models[model];
  return value ? `${row.summary!.label} ${value.text.trim()}` : undefined;
}
