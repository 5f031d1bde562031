/**
 * Entry point of one `toolgym serve --workers N` worker process (forked by cluster.ts). The settings come
 * in `TOOLGYM_WORKER`; the worker reports `{type: "toolgym-worker-ready"}` once both its shared port and
 * its private socket listen.
 */
import { ENVIRONMENTS } from "../envs/registry.ts";
import { startServer } from "./start-server.ts";
import type { WorkerSettings } from "./cluster.ts";

const settings = JSON.parse(process.env.TOOLGYM_WORKER ?? "{}") as WorkerSettings;
const { index, count, socketDirectory, ...options } = settings;
const server = await startServer({ environments: ENVIRONMENTS, ...options, worker: { index, count, socketDirectory } });
process.send?.({ type: "toolgym-worker-ready", index: settings.index, port: server.port });
// The primary disconnects the IPC channel to stop a worker: close sessions and sockets, then exit.
process.on("disconnect", () => {
  void server.close().then(() => process.exit(0));
});
process.on("SIGINT", () => undefined); // Ctrl-C reaches the whole process group; the primary decides when workers stop
