import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { DataError, UsageError } from "../../core/index.ts";
import { METADATA_FILE, readRun, type LoadedRun } from "../../runs/reader.ts";
import { SUITE_MANIFEST, type SuiteManifest } from "../suites/run-suite.ts";

export type { LoadedRun } from "../../runs/reader.ts";

export interface LoadedInputs {
  runs: LoadedRun[];
  manifests: Array<{ directory: string; manifest: SuiteManifest }>;
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new DataError({ code: "RUN_UNREADABLE", file: path, message: `not readable JSON (${(error as Error).message})`, cause: error });
  }
}

/** Reads one run directory (metadata.json + results.jsonl) with the run format's reader. */
export function loadRun(directory: string): LoadedRun {
  return readRun(directory);
}

function findInputs(directory: string, depth: number, found: { runs: string[]; manifests: string[] }): void {
  if (existsSync(join(directory, METADATA_FILE))) {
    found.runs.push(directory);
    return;
  }
  if (existsSync(join(directory, SUITE_MANIFEST))) found.manifests.push(directory);
  if (depth === 0) return;
  for (const name of readdirSync(directory).sort()) {
    if (name.startsWith(".") || name === "node_modules") continue;
    const path = join(directory, name);
    if (statSync(path).isDirectory()) findInputs(path, depth - 1, found);
  }
}

/**
 * Loads the report's inputs: run directories, suite output directories (with `suite.json`), or any folder
 * holding them (searched a few levels deep). Every run is read once, in the order given.
 */
export function loadInputs(paths: readonly string[]): LoadedInputs {
  if (paths.length === 0) throw new UsageError({ code: "REPORT_NO_INPUT", message: "pass at least one run directory, e.g. toolgym report runs/quick" });
  const found = { runs: [] as string[], manifests: [] as string[] };
  for (const path of paths) {
    const absolute = resolve(path);
    if (!existsSync(absolute) || !statSync(absolute).isDirectory())
      throw new UsageError({ code: "REPORT_NO_INPUT", message: `'${path}' is not a directory; pass run directories written by toolgym eval` });
    const before = found.runs.length + found.manifests.length;
    findInputs(absolute, 4, found);
    if (found.runs.length + found.manifests.length === before) {
      throw new UsageError({ code: "REPORT_NO_INPUT", message: `'${path}' holds no run (no metadata.json or suite.json within 4 levels)` });
    }
  }
  const manifests = [...new Set(found.manifests)].map((directory) => ({ directory, manifest: readJson(join(directory, SUITE_MANIFEST)) as SuiteManifest }));
  const runs = [...new Set(found.runs)].map(loadRun);
  return { runs, manifests };
}
