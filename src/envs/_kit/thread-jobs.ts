import { parentPort, Worker } from "node:worker_threads";
import { BusyError, ToolgymError } from "../../core/index.ts";

/**
 * A small pool of worker threads for pure CPU work that must not hold the event loop (babyai's slowest level
 * searches take seconds): at most `threads` jobs run at once, at most `maxQueued` wait, and a job running
 * past `timeoutMilliseconds` has its thread ended. Threads start when needed and end after a while idle;
 * they never keep the process alive.
 */
export interface ThreadJobsOptions {
  /** The worker module: it calls `serveThreadJobs` with the job's function. */
  entry: URL;
  /** What the jobs are, for messages ("babyai level search"). */
  name: string;
  threads: number;
  maxQueued: number;
  timeoutMilliseconds: number;
  /** An idle thread ends after this long (default 30 s). */
  idleMilliseconds?: number;
}

interface Job {
  id: number;
  input: unknown;
  resolve(output: unknown): void;
  reject(error: unknown): void;
}

interface Thread {
  worker: Worker;
  /** Set once the thread has loaded its module: a job's time starts then, not while the thread loads. */
  ready: boolean;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

type Reply = { ready: true } | { id: number; output: unknown } | { id: number; error: { code?: string; message: string } };

/** Starts a worker thread that registers tsx first: threads do not inherit a loader registered in code (bin/toolgym.js). */
function startWorker(entry: URL): Worker {
  const loader = import.meta.resolve("tsx/esm/api");
  const code = `import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(code, { eval: true });
}

export class ThreadJobs<Input, Output> {
  private readonly options: ThreadJobsOptions;
  private readonly queue: Job[] = [];
  private readonly threads = new Set<Thread>();
  private readonly idle: Thread[] = [];
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(options: ThreadJobsOptions) {
    this.options = options;
  }

  /** Jobs running and waiting (tests read it). */
  get pending(): number {
    return this.queue.length + [...this.threads].filter((thread) => thread.job !== undefined).length;
  }

  /** Runs `input` on a thread; rejects with BusyError at once when `maxQueued` jobs already wait. */
  run(input: Input): Promise<Output> {
    const busy = this.threads.size - this.idle.length;
    if (busy >= this.options.threads && this.queue.length >= this.options.maxQueued)
      return Promise.reject(
        new BusyError({
          code: "THREAD_JOBS_FULL",
          message: `${this.options.name}: ${this.options.maxQueued} jobs are already waiting for a thread; try again in a few seconds`,
        }),
      );
    return new Promise<Output>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, input, resolve: resolve as (output: unknown) => void, reject });
      this.feed();
    });
  }

  /** Ends every thread; waiting and running jobs are rejected. */
  async close(): Promise<void> {
    const closed = new ToolgymError({ code: "THREAD_JOBS_CLOSED", message: `${this.options.name}: closed` });
    for (const job of this.queue.splice(0)) job.reject(closed);
    const ending: Promise<number>[] = [];
    for (const thread of this.threads) {
      thread.job?.reject(closed);
      thread.job = undefined;
      clearTimeout(thread.timer);
      ending.push(thread.worker.terminate());
    }
    this.threads.clear();
    this.idle.length = 0;
    clearTimeout(this.idleTimer);
    await Promise.all(ending);
  }

  private feed(): void {
    while (this.queue.length > 0) {
      let thread = this.idle.pop();
      if (!thread) {
        if (this.threads.size >= this.options.threads) return;
        thread = this.startThread();
      }
      this.begin(thread, this.queue.shift() as Job);
    }
  }

  private begin(thread: Thread, job: Job): void {
    thread.job = job;
    thread.worker.ref();
    if (thread.ready) this.send(thread, job);
  }

  private send(thread: Thread, job: Job): void {
    thread.timer = setTimeout(() => {
      this.remove(thread);
      job.reject(
        new ToolgymError({
          code: "THREAD_JOB_TIMEOUT",
          message: `${this.options.name} took over ${this.options.timeoutMilliseconds} ms and was stopped`,
        }),
      );
      this.feed();
    }, this.options.timeoutMilliseconds);
    thread.timer.unref();
    thread.worker.postMessage({ id: job.id, input: job.input });
  }

  private startThread(): Thread {
    const thread: Thread = { worker: startWorker(this.options.entry), ready: false, job: undefined, timer: undefined };
    this.threads.add(thread);
    thread.worker.on("message", (reply: Reply) => {
      if ("ready" in reply) {
        thread.ready = true;
        if (thread.job) this.send(thread, thread.job);
        return;
      }
      const job = thread.job;
      if (!job || job.id !== reply.id) return;
      clearTimeout(thread.timer);
      thread.job = undefined;
      thread.worker.unref();
      if ("error" in reply) job.reject(new ToolgymError({ code: reply.error.code ?? "THREAD_JOB_FAILED", message: reply.error.message }));
      else job.resolve(reply.output);
      this.idle.push(thread);
      this.feed();
      this.scheduleIdleEnd();
    });
    // A thread that failed to load or crashed takes its job with it; the next job starts a new one.
    const lost = (error: unknown) => {
      if (!this.threads.has(thread)) return;
      const job = thread.job;
      this.remove(thread);
      job?.reject(
        new ToolgymError({ code: "THREAD_JOB_FAILED", message: `${this.options.name}: its thread stopped (${String((error as Error)?.message ?? error)})` }),
      );
      this.feed();
    };
    thread.worker.on("error", lost);
    thread.worker.on("exit", (code) => lost(new Error(`exit ${code}`)));
    thread.worker.unref();
    return thread;
  }

  private remove(thread: Thread): void {
    this.threads.delete(thread);
    const at = this.idle.indexOf(thread);
    if (at >= 0) this.idle.splice(at, 1);
    clearTimeout(thread.timer);
    thread.job = undefined;
    void thread.worker.terminate();
  }

  /** Ends the idle threads once none has had a job for `idleMilliseconds`. */
  private scheduleIdleEnd(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      for (const thread of [...this.idle]) this.remove(thread);
    }, this.options.idleMilliseconds ?? 30_000);
    this.idleTimer.unref();
  }
}

/** The worker side: answers each job the pool sends with `work(input)`, or the error it threw. */
export function serveThreadJobs<Input, Output>(work: (input: Input) => Output): void {
  const port = parentPort;
  if (!port) throw new Error("serveThreadJobs runs only in a worker thread started by ThreadJobs");
  port.postMessage({ ready: true });
  port.on("message", ({ id, input }: { id: number; input: Input }) => {
    try {
      port.postMessage({ id, output: work(input) });
    } catch (error) {
      const code = ToolgymError.isInstance(error) ? error.code : undefined;
      port.postMessage({ id, error: { ...(code ? { code } : {}), message: String((error as Error)?.message ?? error) } });
    }
  });
}
