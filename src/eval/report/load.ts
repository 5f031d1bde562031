import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { DataError, UsageError } from "../../core/index.ts";
import type { ResultRecord, RunMetadata } from "../suites/run-directory.ts";
import { SUITE_MANIFEST, type SuiteManifest } from "../suites/run-suite.ts";

export interface LoadedRun {
  directory: string;
  metadata: RunMetadata;
  results: ResultRecord[];
  /** Things the reader had to work around (a torn last line of a killed run, duplicate ids). */
  notes: string[];
}

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

/** Reads one run directory (metadata.json + results.jsonl). */
export function loadRun(directory: string): LoadedRun {
  const metadataPath = join(directory, "metadata.json");
  const metadata = readJson(metadataPath) as RunMetadata;
  if (metadata?.schemaVersion !== 1 || typeof metadata.benchmark !== "string" || !metadata.model?.label || !metadata.generation) {
    throw new DataError({
      code: "RUN_INVALID",
      file: metadataPath,
      message: "not a toolgym run (needs schemaVersion 1, benchmark, model.label, generation); was it written by `toolgym eval`?",
    });
  }
  const notes: string[] = [];
  if (metadata.status !== "complete") notes.push(`run status is '${metadata.status}' (incomplete run)`);
  const resultsPath = join(directory, "results.jsonl");
  const text = existsSync(resultsPath) ? readFileSync(resultsPath, "utf8") : "";
  const lines = text.split("\n");
  const results: ResultRecord[] = [];
  const seen = new Set<string>();
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    let record: ResultRecord;
    try {
      record = JSON.parse(line) as ResultRecord;
    } catch (error) {
      if (index === lines.length - 1) {
        notes.push(`ignored a torn last line ${index + 1} of results.jsonl (the run was interrupted)`);
        return;
      }
      throw new DataError({
        code: "RUN_INVALID",
        file: resultsPath,
        line: index + 1,
        message: `not a JSON object (${(error as Error).message})`,
        cause: error,
      });
    }
    if (typeof record.id !== "string" || (record.status !== "scored" && record.status !== "errored")) {
      throw new DataError({ code: "RUN_INVALID", file: resultsPath, line: index + 1, message: "a result needs a string id and status 'scored' or 'errored'" });
    }
    if (seen.has(record.id)) {
      notes.push(`duplicate result '${record.id}' at line ${index + 1} ignored`);
      return;
    }
    seen.add(record.id);
    results.push(record);
  });
  return { directory, metadata, results, notes };
}

function findInputs(directory: string, depth: number, found: { runs: string[]; manifests: string[] }): void {
  if (existsSync(join(directory, "metadata.json"))) {
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
