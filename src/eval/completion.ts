import { ToolgymError, type JsonValue } from "../core/index.ts";
import type { RunMetadata, RunSummary } from "../runs/schemas.ts";
import { finishRun, writeMetadata } from "../runs/writer.ts";
import type { RunTotals } from "./summary.ts";

/** "all 8 episodes errored: PROVIDER_UNREACHABLE ×8 (connect ECONNREFUSED …)". */
export function failureReason(summary: RunSummary, messages?: ReadonlyMap<string, string>): string {
  const codes = Object.entries(summary.errors)
    .sort((a, b) => b[1] - a[1])
    .map(([code, count]) => {
      const message = messages?.get(code);
      return `${code} ×${count}${message ? ` (${message})` : ""}`;
    });
  return `all ${summary.errored} episodes errored: ${codes.join(", ")}`;
}

/**
 * Closes a run whose every episode is on disk: `failed` when none was scored, else `complete`; writes
 * metadata.json (with the transport statistics of a model run) and summary.json.
 */
export function completeRun(options: {
  directory: string;
  metadata: RunMetadata;
  totals: RunTotals;
  identity: Parameters<RunTotals["summary"]>[0];
  notes: string[];
  /** Transport statistics of a model run. */
  provider?: JsonValue;
  /** The environment's own summary of the run (definition `summary`), written under its key. */
  benchmark?: { key: string; value: JsonValue };
}): { summary: RunSummary; failure?: string } {
  const { totals } = options;
  const failed = totals.count > 0 && totals.scored === 0;
  const summary: RunSummary = {
    ...totals.summary(options.identity, failed ? "failed" : "complete", options.notes),
    ...(options.benchmark && !failed ? { [options.benchmark.key]: options.benchmark.value } : {}),
  };
  const failure = failed ? failureReason(summary, totals.errorMessages) : undefined;
  const provider = options.provider;
  finishRun(options.directory, options.metadata, summary, {
    ...(failure ? { failure: { code: "ALL_EPISODES_ERRORED", message: failure } } : {}),
    ...(provider !== undefined ? { provider } : {}),
  });
  return failure ? { summary, failure } : { summary };
}

/** Marks a run `failed` because the harness stopped on an error (a results file that cannot be written, a bug). */
export function markRunFailed(directory: string, metadata: RunMetadata, error: unknown): void {
  const failure = ToolgymError.isInstance(error)
    ? { code: error.code, message: error.message }
    : { code: "UNEXPECTED", message: String((error as Error)?.message ?? error) };
  writeMetadata(directory, { ...metadata, status: "failed", finishedAt: new Date().toISOString(), failure });
}
