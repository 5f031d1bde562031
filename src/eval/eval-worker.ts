/**
 * The worker-thread side of `toolgym eval --workers N` (see thread-pool.ts for the main-thread side).
 * A worker rebuilds its row (the environment from the registry) and its model from `workerData`, plays
 * the episode slots the main thread sends, and answers each with its results line already serialized,
 * so the main thread only appends text and folds a small digest into the run totals.
 */
import { setMaxListeners } from "node:events";
import { parentPort, workerData } from "node:worker_threads";
import { ToolgymError } from "../core/index.ts";
import { getEnvironment } from "../envs/registry.ts";
import { digestOf } from "../runs/record.ts";
import { prepareModel } from "./agent-factory.ts";
import { playEpisode } from "./episode.ts";
import type { ErrorMessage, FromWorker, ToWorker, WorkerSetup } from "./thread-pool.ts";

const port = parentPort;
if (!port) throw new Error("eval-worker.ts runs only as a worker thread (toolgym eval --workers N)");

/** What crosses the thread boundary of an error: its class name, code and message (classes do not survive structured cloning). */
function errorMessage(error: unknown): ErrorMessage {
  if (ToolgymError.isInstance(error)) return { name: error.name, code: error.code, message: error.message, boundary: error.boundary };
  const plain = error instanceof Error ? error : new Error(String(error));
  return { name: plain.name, message: plain.message, ...(plain.stack ? { stack: plain.stack } : {}) };
}

const setup = workerData as WorkerSetup;
const env = getEnvironment(setup.envId);
const row = { ...setup.row, env };
const model = prepareModel(setup.spec, env);
const controller = new AbortController();
// Every episode in flight listens on it (hundreds at high concurrency): not a leak.
setMaxListeners(0, controller.signal);
const running = new Set<Promise<void>>();

function send(message: FromWorker): void {
  port!.postMessage(message);
}

// Failed attempts reach the main thread's progress line while they happen (a hung server shows its retries),
// and before each finished episode, so the count is whole once the last one is in.
let reported = 0;
function reportRetries(): void {
  const count = model.stats?.failedAttempts ?? 0;
  if (count === reported) return;
  reported = count;
  send({ type: "retries", count });
}
const watcher = setInterval(reportRetries, 500);
watcher.unref();

function play(slot: ToWorker & { type: "slot" }): void {
  const episode = (async () => {
    try {
      const record = await playEpisode(row, model, slot.slot, controller.signal);
      reportRetries();
      if (!record) return send({ type: "done", id: slot.slot.id });
      send({ type: "done", id: slot.slot.id, line: JSON.stringify(record), digest: digestOf(record) });
    } catch (error) {
      send({ type: "failed", id: slot.slot.id, error: errorMessage(error) });
    }
  })();
  running.add(episode);
  void episode.finally(() => running.delete(episode));
}

async function close(): Promise<void> {
  clearInterval(watcher);
  await Promise.all(running);
  await model.pool?.close();
  send({ type: "closed", stats: model.stats, replicas: model.pool?.stats() ?? [] });
  port!.close();
}

port.on("message", (message: ToWorker) => {
  if (message.type === "slot") play(message);
  else if (message.type === "abort") controller.abort(new Error("the run was cancelled"));
  else void close();
});
send({ type: "ready" });
