import { rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { HeldBytes } from "./held-bytes.ts";
import { DEFAULT_HEAD_MILLISECONDS, DEFAULT_REQUEST_MILLISECONDS, createConnectionHandler } from "./http-connection.ts";
import { createRequestListener, createUpgradeListener } from "./node-transport.ts";
import { createProtocol, type Protocol, type ProtocolOptions } from "./protocol.ts";
import { createWorkerRouter, ownerOf, workerIdPrefix, workerSocketPath, type WorkerPlace, type WorkerRouter } from "./worker-routing.ts";

export interface StartServerOptions extends ProtocolOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Set in the workers of `toolgym serve --workers N` (cluster.ts): sessions are routed between workers. */
  worker?: WorkerPlace;
  /** Connections read into one shared buffer (default true; tests also run the stream reading it falls back to). */
  sharedReadBuffer?: boolean;
  /** Most open connections (default 4096); more are closed as they arrive. */
  maxConnections?: number;
  /** A request's head must arrive within this long of its first byte (default 20 s), and the whole request within `requestMilliseconds` (default 60 s). */
  headMilliseconds?: number;
  requestMilliseconds?: number;
  /** Bytes all connections may hold for requests not complete yet (default 64 MiB). */
  maxHeldBytes?: number;
}

export interface RunningServer extends Protocol {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * A worker's private socket, where other workers pass on requests for this worker's sessions (and ask for
 * its counters): answered through the same core, never routed further.
 */
async function listenPrivately(protocol: Protocol, router: WorkerRouter, socketPath: string): Promise<Server> {
  const server = createServer(createRequestListener(protocol, (request, response) => router.answerPeer(request, response)));
  server.keepAliveTimeout = 120_000;
  rmSync(socketPath, { force: true }); // left by a worker that died; its sessions died with it
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // exclusive: this worker listens itself instead of sharing a handle through the cluster primary.
    server.listen({ path: socketPath, exclusive: true }, () => resolve());
  });
  server.on("error", () => undefined);
  return server;
}

/** Trainers call in bursts (one rollout batch per step, minutes apart on big models): keep connections open. */
const KEEP_ALIVE_MILLISECONDS = 120_000;

/**
 * Starts `toolgym serve`: the protocol core (protocol.ts) behind its transports, and a timer that closes
 * idle sessions. Connections are accepted by a TCP server whose reader (http-connection.ts) answers what it
 * frames; node:http (node-transport.ts, which never listens on its own) frames the rest and takes `/ws`.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const place = options.worker;
  const protocol = createProtocol({ ...options, sessionIdPrefix: place ? workerIdPrefix(place.index) : undefined });
  const router = place ? createWorkerRouter(place, protocol) : undefined;
  const sockets = new WebSocketServer({ noServer: true, maxPayload: protocol.options.maxBodyBytes });
  const host = options.host ?? "127.0.0.1";
  const headMilliseconds = options.headMilliseconds ?? DEFAULT_HEAD_MILLISECONDS;
  const requestMilliseconds = options.requestMilliseconds ?? DEFAULT_REQUEST_MILLISECONDS;
  // One budget for the bytes of unfinished requests, whichever transport reads them.
  const heldBytes = new HeldBytes(options.maxHeldBytes);
  const routed = router ? (request: IncomingMessage, response: ServerResponse) => router.route(request, response) : undefined;
  const http = createServer(
    // node:http's own deadlines for the connections handed to it, checked every second rather than every 30.
    { headersTimeout: headMilliseconds, requestTimeout: requestMilliseconds, connectionsCheckingInterval: 1000 },
    createRequestListener(protocol, routed, heldBytes),
  );
  http.on("upgrade", createUpgradeListener(protocol, sockets, Object.keys(options.environments), { heldBytes, requestMilliseconds }));
  http.keepAliveTimeout = KEEP_ALIVE_MILLISECONDS;
  // node:http starts its header and request timeout checks when it listens; it never does here.
  http.emit("listening");
  // A request naming another worker's session, and `GET /stats` (summed over workers), are node:http's (worker-routing.ts).
  const relays = place
    ? (method: string, target: string): boolean =>
        (ownerOf(target, place.count) ?? place.index) !== place.index || (method === "GET" && (target === "/stats" || target.startsWith("/stats?")))
    : undefined;
  const connections = createConnectionHandler({
    http,
    maxBodyBytes: protocol.options.maxBodyBytes,
    keepAliveMilliseconds: KEEP_ALIVE_MILLISECONDS,
    route: protocol.route,
    relays,
    checkPlace: protocol.checkPlace,
    refuseEarly: protocol.refuseEarly,
    identifies: (authorization) => protocol.access.identify(authorization) !== undefined,
    headMilliseconds,
    requestMilliseconds,
    heldBytes,
    maxConnections: options.maxConnections,
    sharedReadBuffer: options.sharedReadBuffer,
  });
  // allowHalfOpen: a client that half-closes after its last request still gets the answer (as node:http does);
  // pauseOnConnect: the reader takes each connection over before anything is read (http-connection.ts, adopt).
  // Every environment's tool schemas before listening: built on the first GET /envs instead, they held that
  // request (and every other) for seconds, over a minute on a loaded machine (tau2_retail reads its database).
  protocol.catalog.list();
  const server = createTcpServer({ allowHalfOpen: true, pauseOnConnect: true }, connections);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port: options.port ?? 8765 }, () => resolve());
  });
  server.on("error", () => undefined);
  const reapEvery = Math.max(250, Math.min(60_000, (protocol.options.idleSeconds * 1000) / 4));
  const timer = setInterval(() => protocol.store.reapIdle(), reapEvery);
  timer.unref();
  const port = (server.address() as AddressInfo).port;
  const privateServer = place && router ? await listenPrivately(protocol, router, workerSocketPath(place.socketDirectory, place.index)) : undefined;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    ...protocol,
    url: `http://${shownHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(timer);
        router?.close();
        privateServer?.closeAllConnections();
        privateServer?.close();
        for (const client of sockets.clients) client.terminate();
        sockets.close();
        protocol.store.closeAll();
        connections.closeAll();
        http.closeAllConnections();
        http.close(() => undefined);
        server.close(() => resolve());
      }),
  };
}
