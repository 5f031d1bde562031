import { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocket, WebSocketServer } from "ws";
import { discardLimitBytes, discardsBody, type Answer } from "./answers.ts";
import { HeldBytes } from "./held-bytes.ts";
import { MAX_UNSENT_BYTES } from "./http-connection.ts";
import { OpenEnvConnection } from "./openenv-protocol.ts";
import type { Protocol } from "./protocol.ts";

/**
 * node:http as a transport of the protocol core: it frames what the socket reader (http-connection.ts)
 * leaves it — chunked or oversized bodies, `Expect`, HTTP/1.0, odd heads — and the requests other workers
 * pass on over a worker's private socket, and answers each through `Protocol.route`. It also takes the
 * WebSocket upgrade to `/ws` (OpenEnv's protocol, openenv-protocol.ts).
 */
function send(response: ServerResponse, answer: Answer, close = false): void {
  const headers: Record<string, string | number> = { "content-type": "application/json", "content-length": answer.bytes };
  if (close) headers.connection = "close";
  response.writeHead(answer.status, headers);
  response.end(answer.text);
}

/**
 * The request listener. `route` takes a request first when it belongs elsewhere (another worker's
 * session, worker-routing.ts) and returns true then.
 */
export function createRequestListener(
  protocol: Protocol,
  route?: (request: IncomingMessage, response: ServerResponse) => boolean,
  heldBytes: HeldBytes = new HeldBytes(),
): (request: IncomingMessage, response: ServerResponse) => void {
  const { maxBodyBytes } = protocol.options;
  return (request, response) => {
    // Host and Origin first, on every transport: a rebinding page must not even learn the server is there.
    const refusal = protocol.checkPlace(request.headers.host, request.headers.origin);
    if (refusal) return send(response, refusal);
    if (route?.(request, response)) return;
    const method = request.method ?? "GET";
    const target = request.url ?? "/";
    const { authorization } = request.headers;
    // The token before the body: an unauthorised client cannot make the server buffer a body.
    // A refused client's connection is closed: it must not keep a socket by drawing a 401 now and then (issue 36).
    const early = protocol.refuseEarly(method, target, authorization);
    if (early) return send(response, early, true);
    const declared = request.headers["content-length"];
    if (declared !== undefined && request.headers["transfer-encoding"] === undefined && Number.parseInt(declared, 10) > maxBodyBytes) {
      // node:http drains the unread body after the answer when the connection stays open (see discardsBody).
      return send(response, protocol.tooLarge, !discardsBody(declared));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    /** What this body holds of the budget every connection shares; given back once it is answered or dropped. */
    let taken = 0;
    const giveBack = (): void => {
      heldBytes.held -= taken;
      taken = 0;
    };
    request.on("close", giveBack);
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (refused) {
        // A chunked body is read and dropped after the 413, up to the same bound as a declared one.
        if (size > discardLimitBytes) request.socket.destroy();
        return;
      }
      if (size > maxBodyBytes) {
        refused = true;
        send(response, protocol.tooLarge);
        return;
      }
      taken += chunk.length;
      heldBytes.held += chunk.length;
      // Too many unfinished bodies at once: this one asks for more than is left (as the socket reader does).
      if (heldBytes.held > heldBytes.max) return void request.socket.destroy();
      chunks.push(chunk);
    });
    request.on("end", () => {
      giveBack();
      if (refused) return;
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
      const reply = protocol.route(method, target)(authorization, body.toString("utf8"));
      if (reply instanceof Promise) void reply.then((ready) => send(response, ready));
      else send(response, reply);
    });
    request.on("error", () => response.destroy());
  };
}

/**
 * Holds a WebSocket's frames to an HTTP request's limits, which it would otherwise escape: the bytes received
 * towards a message not complete yet count against the budget all connections share, and a message must
 * arrive whole within `requestMilliseconds` of its first byte. Bytes count from their arrival (this listener
 * runs before the WebSocket's own) until the next message, ping or pong is read; a read that ends one message
 * and begins the next releases both (the next one is then under-counted by at most that read).
 */
function holdFrames(socket: Duplex, webSocket: WebSocket, heldBytes: HeldBytes, requestMilliseconds: number): void {
  let pending = 0;
  let deadline: NodeJS.Timeout | undefined;
  const release = (bytes: number): void => {
    const released = Math.min(bytes, pending);
    heldBytes.held -= released;
    pending -= released;
    if (pending > 0) return;
    clearTimeout(deadline);
    deadline = undefined;
  };
  socket.prependListener("data", (chunk: Buffer) => {
    pending += chunk.length;
    heldBytes.held += chunk.length;
    if (heldBytes.held > heldBytes.max) return void socket.destroy();
    deadline ??= setTimeout(() => webSocket.terminate(), requestMilliseconds);
  });
  webSocket.on("message", () => release(pending));
  webSocket.on("close", () => release(pending));
  // A ping or pong releases its own frame only (at most a 14-byte head and 125 bytes of payload): between the
  // fragments of a message it must not release the fragments, nor restart the message's deadline (issue 36).
  const control = (payload: Buffer): void => release(payload.length + 14);
  webSocket.on("ping", control);
  webSocket.on("pong", control);
}

/** Writes an answer on a socket whose upgrade is refused, and closes it. */
function refuseUpgrade(socket: Duplex, answer: Answer): void {
  socket.end(
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ""}\r\ncontent-type: application/json\r\ncontent-length: ${answer.bytes}\r\nconnection: close\r\n\r\n${answer.text}`,
  );
}

/**
 * The `upgrade` listener: `/ws` (optionally `?env=ID`, `?token=`) becomes an OpenEnv connection once Host,
 * Origin and the token pass; any other upgrade gets the route's own answer and the socket is closed.
 */
export function createUpgradeListener(
  protocol: Protocol,
  sockets: WebSocketServer,
  environmentIds: readonly string[],
  limits: { heldBytes: HeldBytes; requestMilliseconds: number } = { heldBytes: new HeldBytes(), requestMilliseconds: 60_000 },
): (request: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const idleMilliseconds = protocol.options.idleSeconds * 1000;
  return (request, socket, head) => {
    socket.on("error", () => socket.destroy());
    const target = request.url ?? "/";
    const { authorization } = request.headers;
    const refusal = protocol.checkPlace(request.headers.host, request.headers.origin);
    if (refusal) return refuseUpgrade(socket, refusal);
    const path = target.split("?", 1)[0];
    if (request.method !== "GET" || path !== "/ws") {
      const reply = protocol.route(request.method ?? "GET", target)(authorization, "");
      if (reply instanceof Promise) return void reply.then((ready) => refuseUpgrade(socket, ready));
      return refuseUpgrade(socket, reply);
    }
    const admitted = protocol.admitWebSocket(target, authorization);
    if ("status" in admitted) return refuseUpgrade(socket, admitted);
    sockets.handleUpgrade(request, socket, head, (webSocket) => {
      holdFrames(socket, webSocket, limits.heldBytes, limits.requestMilliseconds);
      const connection = new OpenEnvConnection({
        protocol,
        client: admitted.client,
        defaultEnv: admitted.env ?? (environmentIds.length === 1 ? environmentIds[0] : undefined),
      });
      // Frames are answered in arrival order even when a step awaits (a simulated user, a judge).
      let queue: Promise<void> = Promise.resolve();
      /** Frames read and not answered yet, and their bytes (held against the shared budget until answered). */
      let waiting = 0;
      let waitingBytes = 0;
      // Reading stops while a frame waits behind another (a step awaiting a simulated user: the client's later
      // frames stay in its socket, not in the server's memory; issue 36), and while MAX_UNSENT_BYTES of replies
      // wait unsent to a client that reads none (as the socket reader, http-connection.ts).
      const mayRead = (): void => {
        if (webSocket.isPaused && waiting <= 1 && webSocket.bufferedAmount <= MAX_UNSENT_BYTES) webSocket.resume();
      };
      // An idle WebSocket is closed as an idle session is (`idleSeconds`); never while a frame is being answered.
      const idle = setTimeout(function closeIdle() {
        if (waiting > 0) idle.refresh();
        else webSocket.close(1001, "idle");
      }, idleMilliseconds);
      idle.unref();
      webSocket.on("message", (data) => {
        idle.refresh();
        const text = Buffer.isBuffer(data) ? data.toString("utf8") : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString("utf8");
        const bytes = Buffer.isBuffer(data) ? data.length : text.length;
        waiting++;
        waitingBytes += bytes;
        limits.heldBytes.held += bytes;
        if (waiting > 1) webSocket.pause();
        queue = queue.then(async () => {
          const reply = await connection.handle(text);
          waiting--;
          if (!ended) {
            waitingBytes -= bytes;
            limits.heldBytes.held -= bytes;
          }
          idle.refresh();
          for (const frame of reply.frames) webSocket.send(JSON.stringify(frame), mayRead);
          if (webSocket.bufferedAmount > MAX_UNSENT_BYTES) webSocket.pause();
          else mayRead();
          if (reply.close) webSocket.close(1000, "closed by client");
        });
      });
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        clearTimeout(idle);
        connection.dispose();
        limits.heldBytes.held -= waitingBytes;
        waitingBytes = 0;
      };
      webSocket.on("close", end);
      webSocket.on("error", end);
    });
  };
}
