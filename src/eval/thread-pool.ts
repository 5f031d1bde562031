import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { ToolgymError, UsageError, type ErrorBoundary } from "../core/index.ts";
import type { ProviderStats } from "../agents/openai/agent.ts";
import { getEnvironment } from "../envs/registry.ts";
import type { ResultDigest } from "../runs/record.ts";
import type { ModelSpec } from "./agent-factory.ts";
import type { EpisodeSlot } from "./episode.ts";
import type { EvaluationRow } from "./run-metadata.ts";

/** More threads than this stop paying: the results writer and the model server become the bottleneck first. */
export const MAX_WORKERS = 16;

/** `--workers` default: every core but one (the main thread writes results and draws progress), at least 1, capped. */
export function defaultWorkers(cores: number = availableParallelism()): number {
  return Math.min(MAX_WORKERS, Math.max(1, cores - 1));
}

/** What a worker thread needs to rebuild its row and model (structured-cloneable: no functions, no environment object). */
export interface WorkerSetup {
  envId: string;
  row: Omit<EvaluationRow, "env">;
  spec: ModelSpec;
}

export interface ErrorMessage {
  name: string;
  message: string;
  code?: string;
  boundary?: ErrorBoundary;
  stack?: string;
}

export type ToWorker = { type: "slot"; slot: EpisodeSlot } | { type: "abort" } | { type: "close" };
export type FromWorker =
  | { type: "ready" }
  | { type: "done"; id: string; line?: string; digest?: ResultDigest }
  | { type: "failed"; id: string; error: ErrorMessage }
  /** The worker's failed model-call attempts so far (sent as they change), for the progress line. */
  | { type: "retries"; count: number }
  | { type: "closed"; stats: ProviderStats | null; replicas: ReplicaStats[] };

export type ReplicaStats = { baseUrl: string; requests: number; failures: number };

export interface ThreadPoolResult {
  stats: ProviderStats | null;
  replicas: ReplicaStats[];
}

/** The error a worker reported, rebuilt in this thread with its class name, code and boundary. */
function rebuildError(message: ErrorMessage): Error {
  if (message.code) {
    const error = new ToolgymError({ code: message.code, message: message.message, ...(message.boundary ? { boundary: message.boundary } : {}) });
    error.name = message.name;
    return error;
  }
  const error = new Error(message.message);
  error.name = message.name;
  if (message.stack) error.stack = message.stack;
  return error;
}

/** Sums the provider counters and per-replica counters of the workers (each had its own client). */
function mergeStats(parts: ThreadPoolResult[]): ThreadPoolResult {
  let stats: ProviderStats | null = null;
  const replicas = new Map<string, ReplicaStats>();
  for (const part of parts) {
    if (part.stats) {
      stats ??= { requests: 0, failedAttempts: 0, failuresByReason: {} };
      stats.requests += part.stats.requests;
      stats.failedAttempts += part.stats.failedAttempts;
      for (const [reason, count] of Object.entries(part.stats.failuresByReason)) stats.failuresByReason[reason] = (stats.failuresByReason[reason] ?? 0) + count;
    }
    for (const replica of part.replicas) {
      const total = replicas.get(replica.baseUrl) ?? { baseUrl: replica.baseUrl, requests: 0, failures: 0 };
      total.requests += replica.requests;
      total.failures += replica.failures;
      replicas.set(replica.baseUrl, total);
    }
  }
  return { stats, replicas: [...replicas.values()] };
}

/**
 * Starts a worker thread running eval-worker.ts. Workers do not inherit a loader registered in code
 * (bin/toolgym.js registers tsx that way), so the thread registers tsx itself before importing the module.
 */
function startWorker(setup: WorkerSetup): Worker {
  const loader = import.meta.resolve("tsx/esm/api");
  const entry = new URL("./eval-worker.ts", import.meta.url).href;
  const code = `import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, workerData: setup });
}

/**
 * Plays `slots` on `workers` threads with at most `concurrency` episodes in flight over all of them,
 * handing each finished episode's line and digest to `onResult` in this thread (the one results writer).
 * Slots go to the least busy worker as others finish, so long episodes do not leave threads idle.
 * Cancellation matches runPool: a failure (a worker's harness error, a rejected `onResult`) or an abort
 * of `signal` stops new slots, aborts the running episodes, waits for every one to settle, then the first
 * failure is rethrown.
 */
export async function runOnThreads(
  options: {
    row: EvaluationRow;
    spec: ModelSpec;
    /** The slots, taken one at a time as workers free up; `pending` says how many there are. */
    slots: Iterator<EpisodeSlot>;
    pending: number;
    workers: number;
    concurrency: number;
    signal?: AbortSignal;
    /** Called with the failed model-call attempts over all workers as they change. */
    onRetries?: (count: number) => void;
  },
  onResult: (line: string, digest: ResultDigest) => Promise<void>,
): Promise<ThreadPoolResult> {
  const { row, slots, signal } = options;
  if (getEnvironment(row.env.id) !== row.env)
    throw new UsageError({
      code: "WORKERS_UNREGISTERED_ENV",
      message: `${row.env.id} is not the registered environment of that id, so worker threads cannot rebuild it; run with --workers 1`,
    });
  const { env: _env, ...rest } = row;
  const spec = options.spec.kind === "openai" ? (({ fetch: _fetch, ...plain }) => plain)(options.spec) : options.spec;
  const setup: WorkerSetup = { envId: row.env.id, row: rest, spec };
  const limit = Math.max(1, Math.floor(options.concurrency));
  const count = Math.max(1, Math.min(Math.floor(options.workers), options.pending));
  if (options.pending === 0) return { stats: null, replicas: [] };
  let upcoming = slots.next();

  const inFlight = new Array<number>(count).fill(0);
  const retries = new Array<number>(count).fill(0);
  const parts: ThreadPoolResult[] = [];
  const writes = new Set<Promise<void>>();
  let running = 0;
  let stopping = false;
  let closing = false;
  let failure: { error: unknown } | undefined;
  const workers: Worker[] = [];

  return new Promise<ThreadPoolResult>((resolve, reject) => {
    let exited = 0;
    const finish = () => {
      void Promise.all(writes).then(() => {
        signal?.removeEventListener("abort", stop);
        if (failure) reject(failure.error);
        else resolve(mergeStats(parts));
      });
    };
    const closeAll = () => {
      if (closing) return;
      closing = true;
      for (const worker of workers) worker.postMessage({ type: "close" } satisfies ToWorker);
    };
    const stop = () => {
      if (stopping) return;
      stopping = true;
      for (const worker of workers) worker.postMessage({ type: "abort" } satisfies ToWorker);
      if (running === 0) closeAll();
    };
    const fail = (error: unknown) => {
      failure ??= { error };
      stop();
    };
    const feed = () => {
      while (!stopping && running < limit && !upcoming.done) {
        let target = 0;
        for (let index = 1; index < count; index++) if ((inFlight[index] as number) < (inFlight[target] as number)) target = index;
        inFlight[target]!++;
        running++;
        workers[target]!.postMessage({ type: "slot", slot: upcoming.value } satisfies ToWorker);
        upcoming = slots.next();
      }
      if (running === 0 && (stopping || upcoming.done)) closeAll();
    };
    let ready = 0;
    for (let index = 0; index < count; index++) {
      const worker = startWorker(setup);
      workers.push(worker);
      worker.on("message", (message: FromWorker) => {
        if (message.type === "ready") {
          if (++ready === count) feed();
        } else if (message.type === "closed") {
          parts.push({ stats: message.stats, replicas: message.replicas });
        } else if (message.type === "retries") {
          retries[index] = message.count;
          options.onRetries?.(retries.reduce((sum, each) => sum + each, 0));
        } else {
          inFlight[index]!--;
          running--;
          if (message.type === "failed") fail(rebuildError(message.error));
          else if (message.line !== undefined && message.digest && !failure) {
            const write = onResult(message.line, message.digest).catch(fail);
            writes.add(write);
            void write.finally(() => writes.delete(write));
          }
          feed();
        }
      });
      worker.on("error", (error) => {
        // A worker that died (a crash while loading, an uncaught error) takes its episodes with it.
        running -= inFlight[index] as number;
        inFlight[index] = 0;
        fail(error);
        if (running === 0) closeAll();
      });
      worker.on("exit", (code) => {
        // A worker gone before it was asked to close would leave its episodes, and any sent to it later, hanging.
        if (!closing) {
          running -= inFlight[index] as number;
          inFlight[index] = 0;
          fail(new Error(`an eval worker thread exited (code ${code}) with episodes in flight`));
          if (running === 0) closeAll();
        }
        if (++exited === count) finish();
      });
    }
    if (signal?.aborted) stop();
    else signal?.addEventListener("abort", stop, { once: true });
  });
}
