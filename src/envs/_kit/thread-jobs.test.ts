import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BusyError, ToolgymError } from "../../core/index.ts";
import { ThreadJobs } from "./thread-jobs.ts";

type Input = { value: number; spinMilliseconds?: number; fail?: string };
const entry = new URL("../../testing/thread-jobs-worker.ts", import.meta.url);
const pool = (options: { threads?: number; maxQueued?: number; timeoutMilliseconds?: number } = {}) =>
  new ThreadJobs<Input, number>({
    entry,
    name: "test jobs",
    threads: options.threads ?? 1,
    maxQueued: options.maxQueued ?? 4,
    timeoutMilliseconds: options.timeoutMilliseconds ?? 60_000,
  });

describe("ThreadJobs: CPU work on worker threads, bounded", () => {
  it("answers each job from a thread, and a job's error with its code", async () => {
    const jobs = pool({ threads: 2 });
    try {
      assert.deepEqual(await Promise.all([1, 2, 3, 4, 5].map((value) => jobs.run({ value }))), [2, 4, 6, 8, 10]);
      await assert.rejects(jobs.run({ value: 1, fail: "NOPE" }), (error: unknown) => ToolgymError.isInstance(error) && error.code === "NOPE");
      assert.equal(await jobs.run({ value: 7 }), 14, "the thread still serves after a job failed");
      assert.equal(jobs.pending, 0);
    } finally {
      await jobs.close();
    }
  });

  it("refuses a job at once with BusyError when maxQueued jobs already wait", async () => {
    const jobs = pool({ threads: 1, maxQueued: 2 });
    // One running (it holds its thread for a minute), two waiting: the pool is full.
    const held = [0, 1, 2].map((value) => jobs.run({ value, spinMilliseconds: 60_000 }));
    for (const job of held) job.catch(() => undefined);
    await assert.rejects(jobs.run({ value: 3 }), (error: unknown) => error instanceof BusyError && /2 jobs are already waiting/.test(error.message));
    assert.equal(jobs.pending, 3);
    await jobs.close();
    for (const job of held) await assert.rejects(job, /closed/);
  });

  it("stops a job past its timeout (its thread ended) and serves the next on a new thread", async () => {
    const jobs = pool({ timeoutMilliseconds: 300 });
    try {
      await assert.rejects(
        jobs.run({ value: 1, spinMilliseconds: 120_000 }),
        (error: unknown) => ToolgymError.isInstance(error) && error.code === "THREAD_JOB_TIMEOUT",
      );
      assert.equal(await jobs.run({ value: 21 }), 42);
    } finally {
      await jobs.close();
    }
  });
});
