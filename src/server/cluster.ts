import cluster, { type Worker } from "node:cluster";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ServerError } from "../core/index.ts";
import type { ServerResources } from "./external-config.ts";

/** What the primary tells each worker (as JSON in its environment). */
export interface WorkerSettings {
  index: number;
  count: number;
  socketDirectory: string;
  host: string;
  port: number;
  token?: string;
  /** Tokens travel in the worker's environment, never on its command line. */
  tokens?: string[];
  allowedOrigins?: string[];
  allowedHosts?: string[];
  resources?: ServerResources;
  maxSessions: number;
  maxSessionsPerClient?: number;
  maxConnections?: number;
  idleSeconds: number;
  maxBodyBytes?: number;
}

export interface ClusterOptions extends Omit<WorkerSettings, "index" | "count" | "socketDirectory"> {
  workers: number;
  /** Told when a worker dies and is replaced (its sessions are gone). */
  onWorkerRestart?: (index: number, code: number | null, signal: string | null) => void;
}

export interface RunningCluster {
  url: string;
  port: number;
  workers: number;
  /** The worker processes' ids, by worker index. */
  pids(): number[];
  close(): Promise<void>;
}

/**
 * `toolgym serve --workers N`: N worker processes share one port through Node's cluster module (the
 * primary accepts connections and hands them to the workers in turn). Why a cluster and not one process
 * owning every session: a tool call's cost is mostly HTTP parsing and JSON, which then runs on every core;
 * keep-alive connections stay with the worker that accepted them, so a client that creates a session and
 * calls it on one connection never leaves that worker. Requests for another worker's session are passed
 * to it over a Unix socket (worker-routing.ts), and `/stats` sums every worker's counters.
 */
export async function startServerCluster(options: ClusterOptions): Promise<RunningCluster> {
  if (!cluster.isPrimary) throw new ServerError({ code: "CLUSTER_NESTED", status: 500, message: "a cluster worker cannot start workers of its own" });
  const socketDirectory = mkdtempSync(join(tmpdir(), "toolgym-serve-"));
  cluster.setupPrimary({
    exec: fileURLToPath(new URL("./cluster-worker.ts", import.meta.url)),
    // Workers run the TypeScript sources through tsx, as bin/toolgym.js does.
    execArgv: ["--import", import.meta.resolve("tsx")],
    args: [],
  });
  const byIndex = new Map<number, Worker>();
  let stopping = false;

  const fork = (index: number): Promise<number> => {
    const settings: WorkerSettings = { ...options, index, count: options.workers, socketDirectory };
    delete (settings as Partial<ClusterOptions>).workers;
    delete (settings as Partial<ClusterOptions>).onWorkerRestart;
    const worker = cluster.fork({ TOOLGYM_WORKER: JSON.stringify(settings) });
    byIndex.set(index, worker);
    worker.on("exit", (code, signal) => {
      if (stopping || byIndex.get(index) !== worker) return;
      options.onWorkerRestart?.(index, code, signal);
      void fork(index).catch(() => undefined);
    });
    return new Promise((resolve, reject) => {
      worker.on("message", (message: { type?: string; port?: number }) => {
        if (message?.type === "toolgym-worker-ready") resolve(message.port as number);
      });
      worker.once("exit", (code) =>
        reject(new ServerError({ code: "WORKER_FAILED", status: 500, message: `server worker ${index} exited with ${code} while starting` })),
      );
    });
  };

  const stop = async (): Promise<void> => {
    stopping = true;
    await Promise.all(
      [...byIndex.values()].map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            worker.once("exit", () => resolve());
            worker.disconnect();
            setTimeout(() => worker.process.kill("SIGKILL"), 5000).unref();
          }),
      ),
    );
    rmSync(socketDirectory, { recursive: true, force: true });
  };

  let ports: number[] = [];
  try {
    // Every worker asks for the same address (port 0 too): the primary binds it once and shares it.
    ports = await Promise.all(Array.from({ length: options.workers }, (_, index) => fork(index)));
  } catch (error) {
    await stop();
    throw error;
  }
  const shownHost = options.host.includes(":") ? `[${options.host}]` : options.host;
  const port = ports[0] as number;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    workers: options.workers,
    pids: () => [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, worker]) => worker.process.pid as number),
    close: stop,
  };
}
