import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { unauthorizedMessage } from "./access.ts";
import { errorBody } from "./answers.ts";
import type { Protocol } from "./protocol.ts";

/**
 * Request routing between the workers of `toolgym serve --workers N` (Node cluster: one listening port,
 * connections handed to workers in turn). A session lives in the worker that created it; its id starts
 * with `w<index>-`. A request for another worker's session is passed, as HTTP, to that worker's private
 * Unix socket. Clients that keep one connection per session (the Python adapter does) create and use a
 * session on the same connection, hence on the same worker, so most requests are never passed on.
 */
export interface WorkerPlace {
  index: number;
  count: number;
  /** The folder holding each worker's private socket (`worker-<index>.sock`). */
  socketDirectory: string;
}

export function workerSocketPath(socketDirectory: string, index: number): string {
  return join(socketDirectory, `worker-${index}.sock`);
}

export function workerIdPrefix(index: number): string {
  return `w${index}-`;
}

const sessionRoute = /^\/sessions\/w(\d{1,4})-[^/?]*(?:[/?]|$)/;

/** The worker that owns the session a request path names, or undefined when it names none. */
export function ownerOf(path: string | undefined, count: number): number | undefined {
  const match = sessionRoute.exec(path ?? "");
  if (!match) return undefined;
  const index = Number(match[1]);
  return index < count ? index : undefined;
}

/** Hop-by-hop headers are about one connection and are not passed on (RFC 9110 §7.6.1). */
const hopByHop = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"]);

function passable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !hopByHop.has(name)) kept[name] = value;
  return kept;
}

function sendJson(response: ServerResponse, status: number, body: unknown, close = false): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = { "content-type": "application/json", "content-length": Buffer.byteLength(text) };
  if (close) headers.connection = "close";
  response.writeHead(status, headers);
  response.end(text);
}

type Counters = Record<string, unknown>;

/** Sums numbers field by field (nested objects too): the counters of several workers as one server's. */
export function sumCounters(parts: Counters[]): Counters {
  const total: Counters = {};
  for (const part of parts) {
    for (const [key, value] of Object.entries(part)) {
      if (typeof value === "number") total[key] = ((total[key] as number | undefined) ?? 0) + value;
      else if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        total[key] = sumCounters([(total[key] as Counters | undefined) ?? {}, value as Counters]);
      }
    }
  }
  return total;
}

export interface WorkerRouter {
  /** Takes the request when it belongs to another worker (or is `GET /stats`); false leaves it to this worker. */
  route(request: IncomingMessage, response: ServerResponse): boolean;
  /** On the private socket: takes `GET /stats` (this worker's counters alone); false leaves the request to the app. */
  answerPeer(request: IncomingMessage, response: ServerResponse): boolean;
  close(): void;
}

export function createWorkerRouter(place: WorkerPlace, serverApp: Protocol): WorkerRouter {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const { token, maxBodyBytes } = serverApp.options;
  // Requests this worker passed to the session's owner: few when clients keep a session on one connection.
  let routedRequests = 0;
  const localStats = (): Counters => ({
    open_sessions: serverApp.store.size,
    max_sessions: serverApp.store.maxSessions,
    ...serverApp.store.counters,
    routed_requests: routedRequests,
  });

  const peerStats = (index: number): Promise<Counters | undefined> =>
    new Promise((done) => {
      const outgoing = httpRequest(
        {
          socketPath: workerSocketPath(place.socketDirectory, index),
          path: "/stats",
          method: "GET",
          agent,
          headers: token ? { authorization: `Bearer ${token}` } : {},
        },
        (reply) => {
          const chunks: Buffer[] = [];
          reply.on("data", (chunk: Buffer) => chunks.push(chunk));
          reply.on("end", () => {
            try {
              done(reply.statusCode === 200 ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as Counters) : undefined);
            } catch {
              done(undefined);
            }
          });
          reply.on("error", () => done(undefined));
        },
      );
      outgoing.setTimeout(5000, () => outgoing.destroy());
      outgoing.on("error", () => done(undefined));
      outgoing.end();
    });

  const aggregateStats = async (response: ServerResponse): Promise<void> => {
    const indexes = Array.from({ length: place.count }, (_, index) => index);
    const parts = await Promise.all(indexes.map((index) => (index === place.index ? localStats() : peerStats(index))));
    const answered = parts.filter((part): part is Counters => part !== undefined);
    const missing = indexes.filter((index) => parts[index] === undefined);
    sendJson(response, 200, { ...sumCounters(answered), workers: place.count, ...(missing.length > 0 ? { workers_unavailable: missing } : {}) });
  };

  const forward = (owner: number, request: IncomingMessage, response: ServerResponse): void => {
    const declared = request.headers["content-length"];
    if (declared !== undefined && Number.parseInt(declared, 10) > maxBodyBytes) {
      // Refused before reading the body, as the owner would: the connection cannot be reused.
      sendJson(response, 413, errorBody("BODY_TOO_LARGE", `request bodies are limited to ${maxBodyBytes} bytes`), true);
      return;
    }
    let answered = false;
    const outgoing = httpRequest(
      { socketPath: workerSocketPath(place.socketDirectory, owner), method: request.method, path: request.url, headers: passable(request.headers), agent },
      (reply) => {
        answered = true;
        const headers = passable(reply.headers);
        // The owner closes after refusing an unread body; the client's connection then carries unread bytes too.
        if (reply.headers.connection === "close") headers.connection = "close";
        response.writeHead(reply.statusCode ?? 502, headers);
        reply.pipe(response);
        reply.on("error", () => response.destroy());
      },
    );
    outgoing.on("error", () => {
      if (answered) return;
      if (response.headersSent) return void response.destroy();
      sendJson(
        response,
        503,
        errorBody(
          "WORKER_UNAVAILABLE",
          `the worker that holds this session (${owner}) is not answering; its sessions are lost, create a new one with POST /sessions`,
        ),
      );
    });
    request.pipe(outgoing);
    request.on("error", () => outgoing.destroy());
    response.on("close", () => {
      if (!response.writableFinished) outgoing.destroy();
    });
  };

  return {
    route(request, response) {
      const url = request.url ?? "";
      if (request.method === "GET" && (url === "/stats" || url.startsWith("/stats?"))) {
        if (serverApp.access.identify(request.headers.authorization) === undefined) {
          sendJson(response, 401, errorBody("UNAUTHORIZED", unauthorizedMessage));
          return true;
        }
        void aggregateStats(response);
        return true;
      }
      const owner = ownerOf(url, place.count);
      if (owner === undefined || owner === place.index) return false;
      routedRequests++;
      forward(owner, request, response);
      return true;
    },
    answerPeer(request, response) {
      if (request.method !== "GET" || request.url !== "/stats") return false;
      sendJson(response, 200, localStats());
      return true;
    },
    close() {
      agent.destroy();
    },
  };
}
