import { closeSync, existsSync, fsync, fsyncSync, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { DataError } from "../core/index.ts";

/** What a finished episode contributes to a run summary (kept in memory instead of the whole line). */
export interface ResultDigest {
  id: string;
  status: "scored" | "errored";
  reward: number | null;
  metrics: Record<string, number>;
  turns: number;
  termination: string;
  formatErrors: number;
  errorCode?: string;
  /** Names of the reward components among the metrics (the rest are diagnostics). */
  components: string[];
}

export function digestOf(record: Record<string, unknown>): ResultDigest {
  return {
    id: String(record.id),
    status: record.status === "errored" ? "errored" : "scored",
    reward: typeof record.reward === "number" ? record.reward : null,
    metrics: (record.metrics ?? {}) as Record<string, number>,
    turns: Number(record.turns ?? 0),
    termination: String(record.termination ?? ""),
    formatErrors: Number(record.format_errors ?? 0),
    components: Object.keys((record.info as { trajectory?: { reward?: { components?: object } | null } } | undefined)?.trajectory?.reward?.components ?? {}),
    ...(record.error && typeof record.error === "object" ? { errorCode: String((record.error as { code?: unknown }).code) } : {}),
  };
}

/**
 * Reads an existing results.jsonl for --resume. A torn last line (the process died mid-write: no
 * trailing newline or unparseable) is cut off the file; a bad line anywhere else is a DataError.
 * Returns one digest per distinct id (a duplicate id keeps the first line).
 */
export function readResultsForResume(path: string): ResultDigest[] {
  if (!existsSync(path)) return [];
  const buffer = readFileSync(path);
  let end = buffer.length;
  const lastNewline = buffer.lastIndexOf(0x0a);
  if (lastNewline !== buffer.length - 1) end = lastNewline + 1;
  const lines = buffer.subarray(0, end).toString("utf8").split("\n");
  lines.pop();
  const digests: ResultDigest[] = [];
  const seen = new Set<string>();
  for (let number = 0; number < lines.length; number++) {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(lines[number] as string) as Record<string, unknown>;
    } catch (error) {
      if (number === lines.length - 1) {
        end -= Buffer.byteLength(lines[number] as string) + 1;
        break;
      }
      throw new DataError({
        code: "RESULTS_CORRUPT",
        file: path,
        line: number + 1,
        message: `unparseable result line (${(error as Error).message}); remove the line and resume again`,
        cause: error,
      });
    }
    const digest = digestOf(record);
    if (seen.has(digest.id)) continue;
    seen.add(digest.id);
    digests.push(digest);
  }
  if (end !== buffer.length) {
    const fd = openSync(path, "r+");
    try {
      ftruncateSync(fd, end);
    } finally {
      closeSync(fd);
    }
  }
  return digests;
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
 */
export class ResultsWriter {
  private readonly fd: number;
  private lastSync = Date.now();
  private dirty = false;
  private syncing = false;
  private pending: string[] = [];
  private waiting: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  private scheduled = false;

  constructor(
    private readonly path: string,
    private readonly syncIntervalMs = 200,
  ) {
    this.fd = openSync(path, "a");
  }

  append(record: unknown): void {
    this.flush();
    this.writeText(`${JSON.stringify(record)}\n`);
  }

  write(record: unknown): Promise<void> {
    this.pending.push(JSON.stringify(record));
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
    this.flush();
    if (this.dirty || this.syncing) fsyncSync(this.fd);
    closeSync(this.fd);
  }
}
