import { join } from "node:path";
import type { RunSummary } from "../eval/run-evaluation.ts";
import { RESULTS_FILE, scanResults } from "../runs/reader.ts";

/** The first errored episode's message in a run's results.jsonl (what a user needs to fix it). */
export function firstErrorMessage(directory: string): string | undefined {
  let message: string | undefined;
  scanResults(join(directory, RESULTS_FILE), (record) => {
    if (record.status !== "errored" || !record.error) return;
    message = record.error.message.replace(/\s+/g, " ").slice(0, 240);
    return "stop";
  });
  return message;
}

/** "3 runs (runs/a, runs/b, runs/c): PROVIDER_UNREACHABLE ×6; first: connect ECONNREFUSED …" (one line for many runs). */
export function describeFailedRuns(summaries: RunSummary[]): string {
  const counts = new Map<string, number>();
  for (const summary of summaries) for (const [code, count] of Object.entries(summary.errors)) counts.set(code, (counts.get(code) ?? 0) + count);
  const codes = [...counts].map(([code, count]) => `${code} ×${count}`).join(", ");
  const first = summaries.map((summary) => firstErrorMessage(summary.dir)).find((message) => message !== undefined);
  const runs = summaries.length === 1 ? (summaries[0] as RunSummary).dir : `${summaries.length} runs (${summaries.map((summary) => summary.dir).join(", ")})`;
  return `${runs}: ${codes}${first ? `; first: ${first}` : ""}`;
}

/** "runs/x: 2 of 2 episodes errored (PROVIDER_UNREACHABLE ×2; first: connect ECONNREFUSED …)". */
export function describeErrored(summary: RunSummary): string {
  const codes = Object.entries(summary.errors)
    .map(([code, count]) => `${code} ×${count}`)
    .join(", ");
  const first = firstErrorMessage(summary.dir);
  return `${summary.dir}: ${summary.errored} of ${summary.scored + summary.errored} episodes errored (${codes}${first ? `; first: ${first}` : ""})`;
}
