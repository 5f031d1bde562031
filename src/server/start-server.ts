import { rmSync } from "node:fs";
import { createServer, type RequestListener, type Server, type ServerOptions } from "node:http";
import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { createAdaptorServer, getRequestListener, upgradeWebSocket } from "@hono/node-server";
import { WebSocketServer } from "ws";
import type { AnyEnvironment } from "../core/index.ts";
import { createServerApp, errorBody, type ServerApp, type ServerAppOptions } from "./app.ts";
import { callRoute, createCallAnswerer, createFastCallHandler, type CallAnswer } from "./fast-call.ts";
import { createSessionRoutes } from "./fast-session.ts";
import { DEFAULT_HEAD_MILLISECONDS, DEFAULT_REQUEST_MILLISECONDS, createConnectionHandler } from "./http-connection.ts";
import { OpenEnvConnection } from "./openenv-protocol.ts";
import { createWorkerRouter, ownerOf, workerIdPrefix, workerSocketPath, type WorkerPlace, type WorkerRouter } from "./worker-routing.ts";

export interface StartServerOptions extends ServerAppOptions {
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

export interface RunningServer extends ServerApp {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Adds the OpenEnv WebSocket endpoint `/ws` (optionally `/ws?env=ID`) to a server app. */
function addWebSocketRoute(serverApp: ServerApp, environments: Record<string, AnyEnvironment>): void {
  const ids = Object.keys(environments);
  serverApp.app.get(
    "/ws",
    async (c, next) => {
      // Host, Origin and the token (header or `?token=`) were checked by the app's middleware.
      if (c.req.header("upgrade")?.toLowerCase() !== "websocket")
        return c.json(errorBody("UPGRADE_REQUIRED", "/ws speaks OpenEnv's WebSocket protocol; connect with a WebSocket client"), 426);
      await next();
    },
    upgradeWebSocket((c) => {
      const requested = c.req.query("env");
      const connection = new OpenEnvConnection({
        serverApp,
        client: c.get("client" as never) as string,
        defaultEnv: requested ?? (ids.length === 1 ? ids[0] : undefined),
      });
      // Frames are answered in arrival order even when a step awaits (a simulated user, a judge).
      let queue: Promise<void> = Promise.resolve();
      return {
        onMessage(event, socket) {
          const text = typeof event.data === "string" ? event.data : Buffer.from(event.data as ArrayBuffer).toString("utf8");
          queue = queue.then(async () => {
            const reply = await connection.handle(text);
            for (const frame of reply.frames) socket.send(JSON.stringify(frame));
            if (reply.close) socket.close(1000, "closed by client");
          });
        },
        onClose() {
          connection.dispose();
        },
        onError() {
          connection.dispose();
        },
      };
    }),
  );
}

/**
 * A worker's private socket, where other workers pass on requests for this worker's sessions (and ask for
 * its counters): the same tool-call fast path and app, never routed further.
 */
async function listenPrivately(serverApp: ServerApp, router: WorkerRouter, socketPath: string): Promise<Server> {
  const fastCall = createFastCallHandler(serverApp);
  const honoListener = getRequestListener(serverApp.app.fetch);
  const server = createServer((request, response) => {
    if (router.answerPeer(request, response)) return;
    if (!fastCall(request, response)) void honoListener(request, response);
  });
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
 * Starts `toolgym serve`: the HTTP app plus `/ws`, and a timer that closes idle sessions. Connections are
 * accepted by a TCP server whose reader (http-connection.ts) answers tool calls itself and passes every
 * other request to a node:http server running Hono's adapter (which never listens on its own).
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const place = options.worker;
  const serverApp = createServerApp({ ...options, sessionIdPrefix: place ? workerIdPrefix(place.index) : undefined });
  const router = place ? createWorkerRouter(place, serverApp) : undefined;
  addWebSocketRoute(serverApp, options.environments);
  const sockets = new WebSocketServer({ noServer: true, maxPayload: serverApp.options.maxBodyBytes });
  const host = options.host ?? "127.0.0.1";
  const fastCall = createFastCallHandler(serverApp);
  const headMilliseconds = options.headMilliseconds ?? DEFAULT_HEAD_MILLISECONDS;
  const requestMilliseconds = options.requestMilliseconds ?? DEFAULT_REQUEST_MILLISECONDS;
  // Host and Origin first, on every transport (the socket reader checks its own requests the same way).
  const placeRefusal = (hostHeader: string | undefined, origin: string | undefined): CallAnswer | undefined => {
    const refusal = serverApp.access.checkPlace(hostHeader, origin);
    if (!refusal) return undefined;
    const text = JSON.stringify(errorBody(refusal.code, refusal.message));
    return { status: refusal.status, text, bytes: Buffer.byteLength(text) };
  };
  // Tool calls take the fast path; everything else (and /ws upgrades) goes through Hono's adapter.
  const withFastCall = (serverOptions: ServerOptions, honoListener: RequestListener) =>
    createServer(
      // node:http's own deadlines for the connections handed to it, checked every second rather than every 30.
      { ...serverOptions, headersTimeout: headMilliseconds, requestTimeout: requestMilliseconds, connectionsCheckingInterval: 1000 },
      (request, response) => {
        const refusal = placeRefusal(request.headers.host, request.headers.origin);
        if (refusal) {
          response.writeHead(refusal.status, { "content-type": "application/json", "content-length": refusal.bytes });
          return void response.end(refusal.text);
        }
        if (router?.route(request, response)) return;
        if (!fastCall(request, response)) void honoListener(request, response);
      },
    );
  const http = createAdaptorServer({
    fetch: serverApp.app.fetch,
    hostname: host,
    websocket: { server: sockets },
    createServer: withFastCall as typeof createServer,
  }) as Server;
  http.keepAliveTimeout = KEEP_ALIVE_MILLISECONDS;
  // node:http starts its header and request timeout checks when it listens; it never does here.
  http.emit("listening");
  // A request naming another worker's session is routed by the node:http side (worker-routing.ts).
  const owns = (target: string): boolean => !place || (ownerOf(target, place.count) ?? place.index) === place.index;
  const connections = createConnectionHandler({
    http,
    maxBodyBytes: serverApp.options.maxBodyBytes,
    keepAliveMilliseconds: KEEP_ALIVE_MILLISECONDS,
    callTarget: (target) => {
      const match = callRoute.exec(target);
      return match && owns(target) ? serverApp.store.ownId(match[1] as string) : undefined;
    },
    answerCall: createCallAnswerer(serverApp),
    otherRoute: createSessionRoutes(serverApp, owns),
    checkPlace: placeRefusal,
    headMilliseconds,
    requestMilliseconds,
    maxHeldBytes: options.maxHeldBytes,
    maxConnections: options.maxConnections,
    sharedReadBuffer: options.sharedReadBuffer,
  });
  // allowHalfOpen: a client that half-closes after its last request still gets the answer (as node:http does);
  // pauseOnConnect: the reader takes each connection over before anything is read (http-connection.ts, adopt).
  const server = createTcpServer({ allowHalfOpen: true, pauseOnConnect: true }, connections);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port: options.port ?? 8765 }, () => resolve());
  });
  server.on("error", () => undefined);
  const reapEvery = Math.max(250, Math.min(60_000, (serverApp.options.idleSeconds * 1000) / 4));
  const timer = setInterval(() => serverApp.store.reapIdle(), reapEvery);
  timer.unref();
  const port = (server.address() as AddressInfo).port;
  const privateServer = place && router ? await listenPrivately(serverApp, router, workerSocketPath(place.socketDirectory, place.index)) : undefined;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    ...serverApp,
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
        serverApp.store.closeAll();
        connections.closeAll();
        http.closeAllConnections();
        http.close(() => undefined);
        server.close(() => resolve());
      }),
  };
}
