import { relative, resolve } from "node:path";
import { UsageError } from "../core/index.ts";
import { findRunDirectories, readMetadata } from "../runs/reader.ts";
import { requireDirectory } from "./options.ts";

/**
 * `toolgym report FOLDER` after `eval` ran twice: a folder may hold several runs of the same benchmark
 * and model. Found by searching a folder, the newest complete one is used (a failed or interrupted run
 * only when none is complete), and the others are named on stderr;
 * named one by one on the command line, the user must choose, and the error lists the conflict.
 */
export interface RunSelection {
  /** What to hand the report: the arguments unchanged when nothing conflicts, else the chosen run directories. */
  paths: string[];
  /** One line per (benchmark, model) whose older runs were skipped. */
  notes: string[];
}

/** A run conflict, printed as a short multi-line explanation (the coded line last). */
export class RunConflictError extends UsageError {
  readonly details: string[];
  constructor(details: string[]) {
    super({
      code: "REPORT_RUNS_CONFLICT",
      message:
        "these runs have the same benchmark and model, and the report takes one of each: pass one run directory per (benchmark, model), or the folder holding them to use the newest",
    });
    this.details = details;
  }
}

const SEARCH_DEPTH = 4;

interface FoundRun {
  directory: string;
  explicit: boolean;
  key: string;
  label: string;
  createdAt: string;
  status: string;
}

export function selectRuns(paths: readonly string[]): RunSelection {
  const runs: FoundRun[] = [];
  for (const path of paths) {
    requireDirectory("run directory", path);
    const found: string[] = [];
    found.push(...findRunDirectories(resolve(path), SEARCH_DEPTH));
    for (const directory of found) {
      let metadata;
      try {
        metadata = readMetadata(directory);
      } catch {
        continue; // the report's loader names the unreadable run
      }
      runs.push({
        directory,
        explicit: directory === resolve(path),
        key: `${metadata.benchmark}\u0000${metadata.env.id}\u0000${metadata.model.label}`,
        label: `${metadata.benchmark} / ${metadata.model.label}`,
        createdAt: metadata.createdAt,
        status: metadata.status,
      });
    }
  }
  // A run reached twice (a folder and a run inside it) counts once, as named explicitly if it was.
  const unique = new Map<string, FoundRun>();
  for (const run of runs) unique.set(run.directory, { ...run, explicit: run.explicit || (unique.get(run.directory)?.explicit ?? false) });
  const groups = new Map<string, FoundRun[]>();
  for (const run of unique.values()) groups.set(run.key, [...(groups.get(run.key) ?? []), run]);
  const conflicts = [...groups.values()].filter((group) => group.length > 1);
  if (conflicts.length === 0) return { paths: [...paths], notes: [] };
  const shown = (run: FoundRun) => `${relative(process.cwd(), run.directory) || "."} (${run.createdAt}, ${run.status})`;
  const explicit = conflicts.filter((group) => group.every((run) => run.explicit));
  if (explicit.length > 0) {
    throw new RunConflictError(explicit.map((group) => `${group[0]?.label}: ${group.map(shown).join(", ")}`));
  }
  const chosen: string[] = [];
  const notes: string[] = [];
  for (const group of groups.values()) {
    // The newest complete run; a failed or unfinished one only when no run of the pair is complete.
    const newestFirst = [...group].sort(
      (left, right) =>
        Number(right.status === "complete") - Number(left.status === "complete") ||
        (left.createdAt < right.createdAt ? 1 : left.createdAt > right.createdAt ? -1 : 0),
    );
    const newest = newestFirst[0] as FoundRun;
    chosen.push(newest.directory);
    const which = newest.status === "complete" ? "the newest complete run" : "the newest run (none is complete)";
    if (group.length > 1) notes.push(`${newest.label}: using ${which} ${shown(newest)}; skipped ${newestFirst.slice(1).map(shown).join(", ")}`);
  }
  return { paths: chosen, notes };
}
