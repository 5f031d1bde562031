import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../core/index.ts";
import { METADATA_FILE, RESULTS_FILE, readMetadata, readResultsForResume } from "../runs/reader.ts";
import { checkPathComponent } from "../runs/identity.ts";
import { digestOf, type ResultDigest } from "../runs/record.ts";
import type { RunDescription } from "../runs/writer.ts";
import type { RunMetadata } from "../runs/schemas.ts";

/** The newest run directory under `parent` (run ids sort by time). */
function newestRun(parent: string): string | undefined {
  if (!existsSync(parent)) return undefined;
  const runs = readdirSync(parent, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(parent, entry.name, METADATA_FILE)))
    .map((entry) => entry.name)
    .sort();
  return runs.length > 0 ? join(parent, runs[runs.length - 1] as string) : undefined;
}

/** What differs between a run on disk and the one asked for now, as "--n (100 then, 40 now)", so the user knows what to change. */
function differingFields(existing: RunMetadata, wanted: RunDescription): string[] {
  const show = (value: unknown) => JSON.stringify(value ?? null);
  const pairs: Array<[string, unknown, unknown]> = [
    ["--n", existing.env.n, wanted.env.n],
    ["--seed", existing.env.seed, wanted.env.seed],
    ["--split", existing.env.split, wanted.env.split],
    ["--config", existing.env.config, wanted.env.config],
    ["--samples", existing.env.samples, wanted.env.samples],
    ["--model", existing.model.name, wanted.model.name],
    ["sampling (--temperature, --top-p, --top-k, --max-tokens, --sampling-seed)", existing.generation.sampling, wanted.generation.sampling],
    ["--chat-template-kwargs", existing.generation.chatTemplateKwargs, wanted.generation.chatTemplateKwargs],
    ["--max-turns", existing.generation.maxTurns, wanted.generation.maxTurns],
    ["the environment's tools (its version changed)", existing.generation.toolSchemasHash, wanted.generation.toolSchemasHash],
  ];
  return pairs.filter(([, then, now]) => show(then) !== show(now)).map(([field, then, now]) => `${field} (${show(then)} then, ${show(now)} now)`);
}

export interface ResumedRun {
  directory: string;
  /** The run's metadata, back to `running`. */
  metadata: RunMetadata;
  /** One digest per episode already on disk. */
  previous: ResultDigest[];
  /** What the results reader worked around (a torn last line of the killed run, skipped lines). */
  notes: string[];
  /** Errored episodes taken out of the run to be played again (0 with `keepErrored`). */
  rerun: number;
}

/**
 * Finds the run to continue (`runId` under `parent`, else the newest) and reads what it has done. Its
 * task set, sample count, model and generation path must be the ones asked for now. No run under `parent`
 * means there is nothing to resume (undefined: a new run starts); a `runId` that names no run is refused
 * (RESUME_NOT_FOUND, a typo would otherwise start a new full run).
 */
export function findRunToResume(
  parent: string,
  runId: string | undefined,
  wanted: RunDescription,
  options: { keepErrored?: boolean; readResults?: boolean } = {},
): ResumedRun | undefined {
  const directory = runId ? join(parent, checkPathComponent("--run-id", runId)) : newestRun(parent);
  if (runId && directory && !existsSync(join(directory, METADATA_FILE))) {
    const others = existsSync(parent) ? readdirSync(parent).filter((name) => existsSync(join(parent, name, METADATA_FILE))) : [];
    throw new UsageError({
      code: "RESUME_NOT_FOUND",
      message: `no run ${runId} to resume under ${parent}${others.length > 0 ? ` (runs there: ${others.sort().slice(-5).join(", ")})` : ""}; check --run-id, or drop --resume to start a new run`,
    });
  }
  if (!directory || !existsSync(join(directory, METADATA_FILE))) return undefined;
  const existing = readMetadata(directory);
  if (
    existing.generation.fingerprint !== wanted.generation.fingerprint ||
    existing.taskSetHash !== wanted.taskSetHash ||
    existing.env.samples !== wanted.env.samples ||
    existing.model.name !== wanted.model.name
  ) {
    const fields = differingFields(existing, wanted);
    throw new UsageError({
      code: "RESUME_MISMATCH",
      message: `cannot resume ${directory}: it was run with different ${fields.length > 0 ? fields.join(", ") : `settings (generation fingerprint ${existing.generation.fingerprint})`}; use the same options, or drop --resume to start a new run`,
    });
  }
  const metadata: RunMetadata = { ...existing, status: "running", finishedAt: null };
  delete metadata.failure;
  // A check before the run (checkEvaluation), or a caller that takes the run's lock first, reads nothing yet.
  if (options.readResults === false) return { directory, metadata, previous: [], notes: [], rerun: 0 };
  return { directory, metadata, ...readResumedResults(directory, options) };
}

/** The episodes a resumed run has on disk (errored ones taken out to be rerun unless `keepErrored`); call it holding the run's lock. */
export function readResumedResults(directory: string, options: { keepErrored?: boolean } = {}): Pick<ResumedRun, "previous" | "notes" | "rerun"> {
  const { results, notes, rerun } = readResultsForResume(join(directory, RESULTS_FILE), digestOf, { rerunErrored: !options.keepErrored });
  return { previous: results, notes, rerun };
}
