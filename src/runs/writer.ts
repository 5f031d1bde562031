import { closeSync, fsync, fsyncSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { DataError, UsageError } from "../core/index.ts";
import { TOOLGYM_VERSION, checkPathComponent, createRunId } from "./identity.ts";
import { METADATA_FILE, RESULTS_FILE, SUMMARY_FILE } from "./reader.ts";
import { RUN_SCHEMA_VERSION, RunMetadataSchema, RunSummarySchema, type ResultRecord, type RunMetadata, type RunSummary } from "./schemas.ts";

/**
 * Writes run directories. The guarantees the rest of toolgym relies on:
 * - a run directory is created once: `createRun` refuses one that exists (RUN_EXISTS), so results are
 *   appended to an existing run only when the caller resumes it on purpose (`openResults` after
 *   `findRunToResume`, i.e. `eval --resume`);
 * - the run id and model label are single directory names (`checkPathComponent`), so a run never lands
 *   outside its root;
 * - metadata.json and summary.json are written to a temporary file and renamed, so a reader never sees
 *   half a file; results.jsonl is append-only (see ResultsWriter).
 */

/** What a caller says about a new run; the rest (id, status, version, times) is filled in here. */
export type RunDescription = Omit<
  RunMetadata,
  "schemaVersion" | "runId" | "status" | "toolgymVersion" | "createdAt" | "finishedAt" | "counts" | "failure" | "provider"
>;

/** The metadata of a run that starts now (the one place run metadata is built). */
export function newRunMetadata(description: RunDescription, runId: string = createRunId()): RunMetadata {
  return {
    schemaVersion: RUN_SCHEMA_VERSION,
    runId,
    status: "running",
    toolgymVersion: TOOLGYM_VERSION,
    createdAt: new Date().toISOString(),
    finishedAt: null,
    ...description,
  };
}

/** `<root>/<env>--<label>`: where the runs of one (environment, model) pair live. */
export function runParent(root: string, envId: string, label: string): string {
  return join(root, `${envId}--${checkPathComponent("model label", label)}`);
}

/** `<root>/<env>--<label>/<runId>`: the directory of one run. */
export function runDirectory(root: string, envId: string, label: string, runId: string): string {
  return join(runParent(root, envId, label), checkPathComponent("--run-id", runId));
}

/** Writes JSON through a temporary file and a rename, so a reader never sees half a file. */
function writeJsonAtomic(path: string, value: unknown): void {
  writeFileSync(`${path}.tmp`, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
}

/** Validates and writes metadata.json (a writer bug shows here, not in a report weeks later). */
export function writeMetadata(directory: string, metadata: RunMetadata): void {
  writeJsonAtomic(join(directory, METADATA_FILE), RunMetadataSchema.parse(metadata));
}

export function writeSummary(directory: string, summary: RunSummary): void {
  writeJsonAtomic(join(directory, SUMMARY_FILE), RunSummarySchema.parse(summary));
}

/**
 * Creates `<root>/<env>--<label>/<runId>/` with its metadata ("running") and opens its results for
 * appending. A directory that already exists is refused: a finished run is never appended to by accident.
 */
export function createRun(root: string, metadata: RunMetadata): { directory: string; results: ResultsWriter } {
  const directory = runDirectory(root, metadata.env.id, metadata.model.label, metadata.runId);
  mkdirSync(runParent(root, metadata.env.id, metadata.model.label), { recursive: true });
  try {
    mkdirSync(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") throw runExistsError(directory);
    throw error;
  }
  writeMetadata(directory, metadata);
  return { directory, results: openResults(directory) };
}

/** The refusal to write into a run that exists without --resume. */
export function runExistsError(directory: string): UsageError {
  return new UsageError({
    code: "RUN_EXISTS",
    message: `${directory} already exists; pass --resume to continue that run, or another --run-id (or none) to start a new one`,
  });
}

/** Opens a run's results.jsonl for appending (a new run, or one being resumed). */
export function openResults(directory: string): ResultsWriter {
  return new ResultsWriter(join(directory, RESULTS_FILE));
}

/**
 * Appends result lines to results.jsonl. Lines go out on an O_APPEND descriptor with write(2); once a
 * write returns, its lines are in the OS page cache and a SIGKILL cannot lose them (a kill in the middle
 * of a write leaves at most a torn last line, which --resume cuts off). fsync runs in the background at
 * most every `syncIntervalMs` (and on close) to bound what a machine crash could lose.
 * - `append` writes one line at once (synchronously);
 * - `write` batches: lines queued in the same event-loop turn go out in one write(2), and each promise
 *   resolves only after its line is written, so a caller that counts an episode after awaiting it never
 *   counts one that is not on disk.
 * Writing after `close` is a bug in the caller and throws (the descriptor number may already belong to
 * another file).
 */
export class ResultsWriter {
  private readonly fd: number;
  private lastSync = Date.now();
  private dirty = false;
  private syncing = false;
  private closed = false;
  private pending: string[] = [];
  private waiting: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  private scheduled = false;

  constructor(
    private readonly path: string,
    private readonly syncIntervalMs = 200,
  ) {
    this.fd = openSync(path, "a");
  }

  append(record: ResultRecord): void {
    this.assertOpen();
    this.flush();
    this.writeText(`${JSON.stringify(record)}\n`);
  }

  write(record: ResultRecord): Promise<void> {
    return this.writeLine(JSON.stringify(record));
  }

  /** `write` for a record already serialized to one JSON line (no newline), e.g. by a worker thread. */
  writeLine(line: string): Promise<void> {
    this.assertOpen();
    this.pending.push(line);
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /** Writes the queued lines now (runs by itself once per event-loop turn while lines are queued). */
  readonly flush = (): void => {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const text = `${this.pending.join("\n")}\n`;
    const waiting = this.waiting;
    this.pending = [];
    this.waiting = [];
    try {
      this.writeText(text);
    } catch (error) {
      const failure = new DataError({
        code: "RESULTS_WRITE_FAILED",
        file: this.path,
        message: `could not append to the results file (${(error as Error).message}); free disk space or fix permissions, then rerun with --resume`,
        cause: error,
      });
      for (const waiter of waiting) waiter.reject(failure);
      return;
    }
    for (const waiter of waiting) waiter.resolve();
  };

  private assertOpen(): void {
    if (this.closed) throw new DataError({ code: "RESULTS_CLOSED", file: this.path, message: "a result was written after the results file was closed" });
  }

  private writeText(text: string): void {
    const buffer = Buffer.from(text, "utf8");
    let offset = 0;
    while (offset < buffer.length) offset += writeSync(this.fd, buffer, offset);
    this.dirty = true;
    const now = Date.now();
    if (!this.syncing && now - this.lastSync >= this.syncIntervalMs) {
      // In the background: a slow disk must not stall the event loop (and with it every request in flight).
      this.syncing = true;
      this.dirty = false;
      this.lastSync = now;
      fsync(this.fd, () => {
        this.syncing = false;
      });
    }
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    if (this.dirty || this.syncing) fsyncSync(this.fd);
    closeSync(this.fd);
  }
}

/**
 * Ends a run whose episodes are all on disk: metadata.json gets the final status (the summary's:
 * `complete` or `failed`), the finish time and the counts; summary.json is written beside it.
 */
export function finishRun(directory: string, metadata: RunMetadata, summary: RunSummary, extra: Pick<RunMetadata, "failure" | "provider"> = {}): RunMetadata {
  const finished: RunMetadata = {
    ...metadata,
    status: summary.status,
    finishedAt: new Date().toISOString(),
    counts: { scored: summary.scored, errored: summary.errored },
    ...(extra.failure ? { failure: extra.failure } : {}),
    ...(extra.provider !== undefined ? { provider: extra.provider } : {}),
  };
  writeMetadata(directory, finished);
  writeSummary(directory, summary);
  return finished;
}
