import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../core/index.ts";

/**
 * One writer per run: a process that writes a run directory holds `writer.lock` in it (its pid inside), so a
 * second `eval --resume` of the same run while the first still plays its episodes is refused instead of
 * playing (and paying for) them twice. A lock whose process is gone (killed with SIGKILL, a crashed machine)
 * is stale and taken over, and the run's notes say so.
 */
export const LOCK_FILE = "writer.lock";

export interface RunLock {
  /** Set when a stale lock of a dead process was taken over. */
  note?: string;
  release(): void;
}

/** Whether a process with this pid is running (signal 0 checks without sending anything). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid a lock file names, or undefined when it cannot be read (being written, or removed meanwhile). */
function holder(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The refusal of a second writer: usage (exit 2), naming the holder. */
export function runLockedError(directory: string, pid: number): UsageError {
  return new UsageError({
    code: "RUN_LOCKED",
    message: `${directory} is being written by another toolgym process (pid ${pid}); wait for it to finish (or stop it) before resuming this run`,
  });
}

/** Throws RUN_LOCKED when a live process holds the run (a check before anything runs; takes nothing). */
export function checkRunUnlocked(directory: string): void {
  const pid = holder(join(directory, LOCK_FILE));
  if (pid !== undefined && alive(pid)) throw runLockedError(directory, pid);
}

/** Takes the run's lock, or throws RUN_LOCKED naming the live process that holds it. */
export function lockRun(directory: string): RunLock {
  const path = join(directory, LOCK_FILE);
  let note: string | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      let released = false;
      return {
        ...(note ? { note } : {}),
        release() {
          if (released) return;
          released = true;
          if (holder(path) === process.pid) unlinkSync(path);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const pid = holder(path);
    if (pid !== undefined && alive(pid)) throw runLockedError(directory, pid);
    // Stale (its process is gone) or unreadable: removed, and the next attempt creates ours (or meets a faster writer's).
    note = `took over a stale writer lock of pid ${pid ?? "unknown"} (that process is gone)`;
    try {
      unlinkSync(path);
    } catch {
      // another process removed it first
    }
  }
  const pid = holder(path);
  throw runLockedError(directory, pid ?? 0);
}
