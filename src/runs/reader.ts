import { closeSync, existsSync, ftruncateSync, openSync, readFileSync, readSync, readdirSync, renameSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { ZodType } from "zod";
import { DataError } from "../core/index.ts";
import { ResultRecordSchema, RunMetadataSchema, RunSummarySchema, type ResultRecord, type RunMetadata, type RunSummary } from "./schemas.ts";

/**
 * Reading run directories. Every reader (report, viewer, resume, exporters) goes through `scanResults`,
 * so a results.jsonl means the same thing everywhere. The policy for lines that are not a result:
 * - a blank line is ignored;
 * - a torn last line (not JSON: the process was killed in the middle of writing it) is dropped and noted;
 *   `--resume` also cuts it off the file so new lines start clean;
 * - any other line that is not JSON, or not a result record (schemas.ts), is skipped and noted with its
 *   line number: one bad line (a hand edit, a disk fault) never hides the rest of a run;
 * - a second line with an id already seen is ignored and noted (the first line wins).
 * Notes say what was worked around; reports and the viewer show them next to the run.
 */
export const METADATA_FILE = "metadata.json";
export const RESULTS_FILE = "results.jsonl";
export const SUMMARY_FILE = "summary.json";

/** Skipped lines noted one by one; past this many the rest are counted in one note. */
const NOTED_LINES = 20;
const CHUNK_BYTES = 1 << 20;

export interface ResultsScan {
  notes: string[];
  /** Byte length of the lines worth keeping: a torn last line starts here (resume cuts the file to it). */
  keptBytes: number;
  /** The file ends with a whole record that lacks its newline (resume adds it before appending). */
  missingNewline: boolean;
  /** The visitor asked to stop before the end of the file. */
  stopped: boolean;
}

function firstIssue(error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> }): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  return issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ${issue.message}` : issue.message;
}

/** Calls `onLine(bytes, start, terminated)` for each line of a file, reading it in chunks (constant memory in the file size). */
function forEachLine(path: string, onLine: (line: Buffer, start: number, terminated: boolean) => boolean): void {
  const fd = openSync(path, "r");
  try {
    const chunk = Buffer.alloc(CHUNK_BYTES);
    let carry: Buffer = Buffer.alloc(0);
    let position = 0;
    let carryStart = 0;
    for (;;) {
      const read = readSync(fd, chunk, 0, chunk.length, position);
      if (read === 0) break;
      position += read;
      let data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, read)]) : chunk.subarray(0, read);
      let lineStart = 0;
      for (let newline = data.indexOf(0x0a); newline !== -1; newline = data.indexOf(0x0a, lineStart)) {
        if (!onLine(data.subarray(lineStart, newline), carryStart + lineStart, true)) return;
        lineStart = newline + 1;
      }
      carryStart += lineStart;
      data = data.subarray(lineStart);
      carry = Buffer.from(data);
    }
    if (carry.length > 0) onLine(carry, carryStart, false);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads results.jsonl line by line under the policy above, calling `visit` with each result record in
 * file order (return "stop" to end early). A missing file reads as empty.
 */
export function scanResults(path: string, visit: (record: ResultRecord, line: number) => void | "stop"): ResultsScan {
  const scan: ResultsScan = { notes: [], keptBytes: 0, missingNewline: false, stopped: false };
  if (!existsSync(path)) return scan;
  const seen = new Set<string>();
  let skipped = 0;
  let number = 0;
  // An unparseable line is held back until the next line shows whether it was the last (torn) one.
  let unparseable: { line: number; start: number; reason: string } | null = null;
  const skip = (line: number, reason: string) => {
    skipped++;
    if (skipped <= NOTED_LINES) scan.notes.push(`skipped line ${line} of results.jsonl (${reason})`);
  };
  forEachLine(path, (bytes, start, terminated) => {
    number++;
    scan.keptBytes = start + bytes.length + (terminated ? 1 : 0);
    const text = bytes.toString("utf8");
    if (text.trim() === "") return true;
    if (unparseable) skip(unparseable.line, unparseable.reason);
    unparseable = null;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      unparseable = { line: number, start, reason: `not JSON: ${(error as Error).message}` };
      return true;
    }
    if (!terminated) scan.missingNewline = true;
    const parsed = ResultRecordSchema.safeParse(value);
    if (!parsed.success) {
      skip(number, `not a result record: ${firstIssue(parsed.error)}`);
      return true;
    }
    if (seen.has(parsed.data.id)) {
      scan.notes.push(`duplicate result '${parsed.data.id}' at line ${number} ignored`);
      return true;
    }
    seen.add(parsed.data.id);
    if (visit(parsed.data, number) === "stop") {
      scan.stopped = true;
      return false;
    }
    return true;
  });
  const torn = unparseable as { line: number; start: number } | null;
  if (torn && !scan.stopped) {
    scan.notes.push(`ignored a torn last line ${torn.line} of results.jsonl (the run was interrupted)`);
    scan.keptBytes = torn.start;
  }
  if (skipped > NOTED_LINES) scan.notes.push(`skipped ${skipped - NOTED_LINES} more lines of results.jsonl that are not results`);
  return scan;
}

function readJsonFile<T>(path: string, schema: ZodType<T>, what: string): T {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new DataError({
      code: "RUN_UNREADABLE",
      file: path,
      message: `not readable JSON (${(error as Error).message}); is this a run directory written by toolgym eval?`,
      cause: error,
    });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new DataError({ code: "RUN_INVALID", file: path, message: `not a toolgym ${what} (${firstIssue(parsed.error)}); was it written by toolgym eval?` });
  return parsed.data;
}

export function readMetadata(directory: string): RunMetadata {
  return readJsonFile(join(directory, METADATA_FILE), RunMetadataSchema, "run metadata file");
}

export function readSummary(directory: string): RunSummary {
  return readJsonFile(join(directory, SUMMARY_FILE), RunSummarySchema, "run summary");
}

/** Notes about the run as a whole that every reader shows. */
export function statusNotes(metadata: RunMetadata): string[] {
  if (metadata.status === "complete") return [];
  if (metadata.status === "failed") return [`run status is 'failed'${metadata.failure ? ` (${metadata.failure.message})` : ""}`];
  return [`run status is '${metadata.status}' (incomplete run)`];
}

export interface LoadedRun {
  directory: string;
  metadata: RunMetadata;
  results: ResultRecord[];
  /** What the reader worked around (run status, skipped lines, a torn last line, duplicate ids). */
  notes: string[];
}

/** Reads a whole run into memory: metadata.json and every result of results.jsonl. */
export function readRun(directory: string): LoadedRun {
  const metadata = readMetadata(directory);
  const results: ResultRecord[] = [];
  const scan = scanResults(join(directory, RESULTS_FILE), (record) => {
    results.push(record);
  });
  return { directory, metadata, results, notes: [...statusNotes(metadata), ...scan.notes] };
}

/**
 * Reads results.jsonl for --resume and readies it for appending: a torn last line is cut off, a missing
 * final newline is added. Returns each result (first line per id) and the reader's notes. With
 * `rerunErrored`, errored episodes are taken out of the file (rewritten beside it and renamed, so a kill
 * leaves the old file or the new one) and out of the results, to be played again; `rerun` counts them.
 */
export function readResultsForResume<T>(
  path: string,
  digest: (record: ResultRecord) => T,
  options: { rerunErrored?: boolean } = {},
): { results: T[]; notes: string[]; rerun: number } {
  const results: T[] = [];
  const errored = new Set<number>();
  const codes: Record<string, number> = {};
  const scan = scanResults(path, (record, line) => {
    if (options.rerunErrored && record.status === "errored") {
      errored.add(line);
      const code = record.error?.code ?? "UNKNOWN";
      codes[code] = (codes[code] ?? 0) + 1;
      return;
    }
    results.push(digest(record));
  });
  if (existsSync(path)) {
    const fd = openSync(path, "r+");
    try {
      ftruncateSync(fd, scan.keptBytes);
      if (scan.missingNewline && scan.keptBytes > 0) writeSync(fd, "\n", scan.keptBytes);
    } finally {
      closeSync(fd);
    }
  }
  if (errored.size > 0) {
    dropLines(path, errored);
    const summary = Object.entries(codes)
      .map(([code, count]) => `${code} ×${count}`)
      .join(", ");
    scan.notes.push(`reran ${errored.size} errored episode${errored.size === 1 ? "" : "s"} (${summary}); --keep-errored keeps them`);
  }
  return { results, notes: scan.notes, rerun: errored.size };
}

/** Rewrites a file without the given 1-based line numbers: written beside it, synced and renamed over it. */
function dropLines(path: string, drop: ReadonlySet<number>): void {
  const temporary = `${path}.${process.pid}.rewrite`;
  const out = openSync(temporary, "w");
  try {
    let number = 0;
    forEachLine(path, (bytes, _start, terminated) => {
      number++;
      if (drop.has(number)) return true;
      writeSync(out, bytes);
      if (terminated) writeSync(out, "\n");
      return true;
    });
  } finally {
    closeSync(out);
  }
  renameSync(temporary, path);
}

/** Run directories (those holding a metadata file) at or below `directory`, at most `depth` levels down, in name order. */
export function findRunDirectories(directory: string, depth: number): string[] {
  if (existsSync(join(directory, METADATA_FILE))) return [directory];
  if (depth === 0) return [];
  const found: string[] = [];
  for (const name of readdirSync(directory).sort()) {
    if (name.startsWith(".") || name === "node_modules") continue;
    const path = join(directory, name);
    if (statSync(path).isDirectory()) found.push(...findRunDirectories(path, depth - 1));
  }
  return found;
}
