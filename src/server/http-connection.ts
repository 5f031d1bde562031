import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import { Socket, type SocketConstructorOpts } from "node:net";
import type { Answer } from "./answers.ts";
import { DEFAULT_HEAD_MILLISECONDS, DEFAULT_REQUEST_MILLISECONDS, sweepDeadlines, type WatchedConnection } from "./connection-deadlines.ts";
import { HeldBytes } from "./held-bytes.ts";
import { headEnd, parseRequestHead, type RequestHead } from "./http-head.ts";
import type { Handler } from "./protocol.ts";
import { Relay } from "./relay.ts";
import { createHeadTails, statusPrefix } from "./response-head.ts";

/**
 * The socket transport of the protocol core: reads HTTP/1.1 straight off each TCP connection and answers
 * every request it can frame through `Protocol.route` (protocol.ts). Why: for a tool call of a few hundred
 * bytes, node:http's per-request objects (an IncomingMessage stream, a ServerResponse stream, header
 * objects, timers) cost more server CPU than the rest of the call; under the bench load a trivial node:http
 * handler alone takes about twice the CPU per request of a reader on the raw socket.
 *
 * What it does not answer itself goes to node:http (node-transport.ts), which answers through the same core:
 * - a request it frames but another process must answer (`relays`: another worker's session) or whose
 *   head node:http must judge (no `Host`, an odd `Connection`) is passed, as received, through a
 *   per-connection in-memory stream (`Relay`), and the response bytes come back to the socket;
 * - a request it cannot frame or would judge differently from node:http (chunked or oversized bodies,
 *   upgrades, `Expect`, HTTP/1.0, an odd character in the head) hands the socket itself to node:http for
 *   the rest of the connection.
 * Responses go out in request order: while a relayed request is in flight, later ones wait.
 *
 * Each connection reads into one buffer shared by all (`adopt`) rather than through a readable stream.
 */
export interface ConnectionHandlerOptions {
  /** Takes what this reader passes on; its `request` listener is the app's. */
  http: HttpServer;
  maxBodyBytes: number;
  /** Idle connections are closed after this long (node:http's keep-alive timeout). */
  keepAliveMilliseconds: number;
  /**
   * The handler of a request (`Protocol.route`), a function of method and target alone: each connection
   * keeps the one for the last method and target it saw (a trainer calls one session over and over).
   */
  route(method: string, target: string): Handler;
  /** Whether node:http must answer this request instead (another worker's session); also kept per target. */
  relays?(method: string, target: string): boolean;
  /** The 401 a request gets before its body is read (`Protocol.refuseEarly`); asked on a connection until it shows an accepted token. */
  refuseEarly?(method: string, target: string, authorization: string | undefined): Answer | undefined;
  /** Whether a request's `Authorization` names an accepted client (always, on a server without tokens). */
  identifies?(authorization: string | undefined): boolean;
  /** The 403 for a request whose `Host` or `Origin` is not allowed (access.ts), else undefined. */
  checkPlace(host: string | undefined, origin: string | undefined): Answer | undefined;
  /** A request's head must arrive within this long of its first byte, trickled or not (default 20 s). */
  headMilliseconds?: number;
  /** And the whole request, body included, within this long (default 60 s). */
  requestMilliseconds?: number;
  /** Most open connections (default 4096): more are closed as they arrive, before file handles run out. */
  maxConnections?: number;
  /** Bytes all connections together may hold for requests not complete yet (default 64 MiB); past it the connection that asks for more is closed. */
  maxHeldBytes?: number;
  /** The budget those bytes count against, when node:http's bodies share it (start-server.ts); else one of `maxHeldBytes`. */
  heldBytes?: HeldBytes;
  /**
   * Read connections into one shared buffer (`adopt`; the listening server must accept with
   * `pauseOnConnect`). Default true; false reads each connection as a stream.
   */
  sharedReadBuffer?: boolean;
}

export interface ConnectionHandler {
  (socket: Socket): void;
  /** Destroys every open connection (server shutdown). */
  closeAll(): void;
}

export { DEFAULT_HEAD_MILLISECONDS, DEFAULT_REQUEST_MILLISECONDS };

/**
 * Answers a connection may have waiting to be sent before the reader answers its next request. Why: a client
 * that pipelines requests and never reads made the server hold every answer (`GET /envs` is 33 KB for a
 * 40-byte request: 760 KiB of requests held 660 MiB). Past it, requests wait unanswered, counted in the bytes held.
 */
export const MAX_UNSENT_BYTES = 256 * 1024;

/** node:http's default limit on a request head (`--max-http-header-size`); longer heads are node's to refuse. */
const HEAD_LIMIT = 16 * 1024;

const NOTHING: Buffer = Buffer.alloc(0);

/** blankLineProgress's answer for a line feed without its carriage return: node:http refuses such a head. */
const BARE_LINE_FEED = 5;

/**
 * How much of a request head's blank line (CR LF CR LF) ends `bytes[start, end)`, continuing from `matched`
 * bytes of it before: 4 once it is complete, BARE_LINE_FEED at a line feed not after a carriage return (a
 * head this reader would wait on until its deadline; node:http answers it 400 at once). Pieces of a head
 * that arrive apart are scanned once each.
 */
function blankLineProgress(bytes: Uint8Array, start: number, end: number, matched: number): number {
  for (let index = start; index < end && matched < 4; index++) {
    const byte = bytes[index];
    if (byte === 0x0d) matched = matched === 2 ? 3 : 1;
    else if (byte === 0x0a) matched = matched === 1 ? 2 : matched === 3 ? 4 : BARE_LINE_FEED;
    else matched = 0;
  }
  return matched;
}

/** What every adopted connection reads into; a connection copies out what it keeps past a read. */
const readBuffer = Buffer.alloc(64 * 1024);

/**
 * A socket over the accepted one's connection that reads into `readBuffer` and hands each read to
 * `onRead` (net.Socket's documented `onread` option). Why: a socket read as a stream allocates a buffer
 * per read and passes it through the stream machinery (two deferred callbacks per read); for tool calls of
 * a few hundred bytes that was about a sixth of the server's CPU per call. net.Server offers no such
 * sockets, so the accepted socket, paused since it was accepted (`pauseOnConnect`), gives its handle to a
 * new one and is discarded. Undefined when that is not possible here (not paused, or a Node whose sockets
 * do not carry a TCP handle); the caller then reads the accepted socket as a stream.
 */
export function adopt(accepted: Socket, onRead: (length: number, buffer: Buffer) => boolean): Socket | undefined {
  const internals = accepted as unknown as { _handle?: { readStart?: unknown; useUserBuffer?: unknown } | null };
  const handle = internals._handle;
  if (!accepted.isPaused() || typeof handle?.readStart !== "function" || typeof handle.useUserBuffer !== "function") return undefined;
  const options = { handle, allowHalfOpen: accepted.allowHalfOpen, onread: { buffer: readBuffer, callback: onRead } };
  const socket = new Socket(options as SocketConstructorOpts);
  // Discarded without closing the connection it no longer holds (and uncounted by its server).
  internals._handle = null;
  accepted.destroy();
  return socket;
}

/** Whether `bytes[start, end)` equals `expected`. */
function holdsBytes(bytes: Buffer, start: number, end: number, expected: Buffer): boolean {
  if (end - start !== expected.length || expected.length === 0) return false;
  for (let index = 0; index < expected.length; index++) if (bytes[start + index] !== expected[index]) return false;
  return true;
}

export function createConnectionHandler(options: ConnectionHandlerOptions): ConnectionHandler {
  const { http } = options;
  const headMilliseconds = options.headMilliseconds ?? DEFAULT_HEAD_MILLISECONDS;
  const requestMilliseconds = options.requestMilliseconds ?? DEFAULT_REQUEST_MILLISECONDS;
  /** Bytes held by every connection for requests not complete yet. */
  const budget = options.heldBytes ?? new HeldBytes(options.maxHeldBytes);
  const { keepingAlive, closing } = createHeadTails(options.keepAliveMilliseconds);
  /** Every connection; `own` while this reader has it (node:http times out the ones handed to it). */
  const open = new Set<WatchedConnection>();

  // A relayed response has been written once its ServerResponse finishes (or is torn down).
  http.prependListener("request", (request: IncomingMessage, response: ServerResponse) => {
    const relay = request.socket;
    if (!(relay instanceof Relay)) return;
    const done = relay.onResponseDone;
    response.once("finish", done);
    response.once("close", done);
  });

  const maxConnections = options.maxConnections ?? 4096;
  /** Closes the oldest connection this reader holds that has not authenticated; false when there is none. */
  const evictUntrusted = (): boolean => {
    for (const state of open) {
      if (state.trusted || !state.own) continue;
      open.delete(state);
      state.socket.destroy();
      return true;
    }
    return false;
  };
  const handle = (accepted: Socket): void => {
    // Counted here: an adopted socket is no longer counted by its net.Server (see adopt), so its maxConnections cannot.
    // At the cap, the oldest connection that has not authenticated makes room; without one, the new one goes.
    if (open.size >= maxConnections && !evictUntrusted()) return void accepted.destroy();
    const adopted = options.sharedReadBuffer === false ? undefined : adopt(accepted, (length, buffer) => onRead(length, buffer));
    const socket = adopted ?? accepted;
    socket.setNoDelay(true);
    /** Bytes received and not yet answered or passed on: `buffered`, then `pieces` not joined yet; `size` counts both. */
    let buffered = NOTHING;
    let pieces: Buffer[] = [];
    let size = 0;
    /** How much of the head's blank line the pieces ended on (blankLineProgress). */
    let blankLine = 0;
    /** The reader waits for the client to read its answers before answering more (MAX_UNSENT_BYTES); the idle timeout then applies, not the request deadlines. */
    let waitingToSend = false;
    const state: WatchedConnection = {
      socket,
      openedSince: Date.now(),
      trusted: false,
      idleSince: Date.now(),
      busy: false,
      own: true,
      /** When the first byte of the request being received arrived. */
      requestSince: 0,
      waiting: (): "head" | "body" | undefined => (size === 0 || state.busy || waitingToSend ? undefined : head ? "body" : "head"),
    };
    open.add(state);
    /** Sets `size`, keeping the bytes all connections hold up to date. */
    const resize = (next: number): void => {
      budget.held += next - size;
      size = next;
    };
    let lastHost = NOTHING;
    let head: RequestHead | undefined;
    let relay: Relay | undefined;
    let clientEnded = false;
    /** The last answer closed the connection. */
    let ended = false;
    let lastMethod = "";
    let lastTarget = NOTHING;
    let lastHandler: Handler | undefined;

    const handOff = (): void => {
      socket.removeListener("data", onData);
      socket.removeListener("end", onEnd);
      state.own = false;
      if (relay) {
        relay.detached = true;
        relay.destroy();
      }
      socket.pause();
      join();
      if (size > 0) socket.unshift(Buffer.from(buffered)); // a copy: it may lie in the shared read buffer
      buffered = NOTHING;
      resize(0);
      http.emit("connection", socket);
      socket.resume();
    };

    const answer = (reply: Answer, close: boolean): void => {
      // A refused client's connection is closed: it must not keep a socket by drawing a 401 now and then.
      if (reply.status === 401 && !state.trusted) close = true;
      // One string, so one write and one send: the head and body never leave in separate packets.
      socket.write(statusPrefix(reply.status) + reply.bytes + (close ? closing() : keepingAlive()) + reply.text);
      if (close) {
        ended = true;
        socket.end();
      }
    };

    const relayRequest = (request: Buffer): void => {
      if (!relay) {
        relay = new Relay(socket);
        http.emit("connection", relay);
      }
      state.busy = true;
      let finished = false;
      relay.onResponseDone = () => {
        if (finished) return;
        finished = true;
        state.busy = false;
        state.idleSince = Date.now();
        // Later requests that arrived meanwhile; on a later tick, after node:http's own bookkeeping.
        if (size > 0 || clientEnded) setImmediate(drain);
      };
      relay.push(Buffer.from(request)); // a copy: it may lie in the shared read buffer
    };

    /** Joins the pieces received since the last look into `buffered`: once per request, not once per read. */
    const join = (): void => {
      if (pieces.length === 0) return;
      buffered = Buffer.concat([buffered, ...pieces], size);
      pieces = [];
    };

    /** An answer the reader gives itself (a promise for a session whose data loads first): in order, later requests wait. */
    const answerSoon = (reply: Answer | Promise<Answer>, close: boolean): void => {
      if (!(reply instanceof Promise)) return answer(reply, close);
      state.busy = true;
      void reply.then((ready) => {
        state.busy = false;
        state.idleSince = Date.now();
        if (socket.destroyed) return;
        answer(ready, close);
        if (size > 0 || clientEnded) setImmediate(drain);
      });
    };

    /** Answers or passes on the complete requests buffered, in order, until one is in flight or the answers wait unsent. */
    const answerBuffered = (): void => {
      while (size > 0 && !state.busy && !socket.writableEnded && !socket.destroyed) {
        if (socket.writableLength > MAX_UNSENT_BYTES) {
          if (!waitingToSend) socket.once("drain", sent);
          waitingToSend = true;
          return;
        }
        join();
        const data = buffered;
        if (!head) {
          const end = headEnd(data, Math.min(size, HEAD_LIMIT + 4));
          if (end < 0 ? size > HEAD_LIMIT : end > HEAD_LIMIT) return handOff();
          if (end < 0) {
            // The head so far, scanned once: a bare line feed in it is node:http's to refuse.
            blankLine = blankLineProgress(data, 0, size, 0);
            if (blankLine === BARE_LINE_FEED) return handOff();
            return;
          }
          head = parseRequestHead(data, end, options.maxBodyBytes);
          if (!head) return handOff();
          // Until a connection shows an accepted token, a request without one is refused before its body is
          // held, and the connection closed: unauthenticated sockets cannot hold what others need (issue 36).
          if (!state.trusted && head.plain) {
            const target = data.toString("latin1", head.targetStart, head.targetEnd);
            const refusal = options.refuseEarly?.(head.method, target, head.authorization);
            if (refusal) {
              buffered = NOTHING;
              pieces = [];
              resize(0);
              head = undefined;
              answer(refusal, true);
              return;
            }
            state.trusted = options.identifies?.(head.authorization) ?? true;
          }
        }
        const { total, bodyStart } = head;
        if (size < total) return;
        const taken = head;
        head = undefined;
        if (size === total) {
          buffered = NOTHING;
          resize(0);
        } else {
          buffered = data.subarray(total);
          resize(size - total);
          state.requestSince = Date.now();
        }
        // node:http judges a head it reads differently (no Host, an odd Connection).
        if (!taken.plain) {
          relayRequest(size === 0 ? data : data.subarray(0, total));
          continue;
        }
        // A client sends one Host on every request: it is judged when it changes.
        const { hostStart, hostEnd } = taken;
        let refusal: Answer | undefined;
        if (taken.origin !== undefined || !holdsBytes(data, hostStart, hostEnd, lastHost)) {
          refusal = options.checkPlace(hostStart < 0 ? undefined : data.toString("latin1", hostStart, hostEnd), taken.origin);
          if (!refusal && taken.origin === undefined && hostStart >= 0) lastHost = Buffer.from(data.subarray(hostStart, hostEnd));
        }
        if (refusal) {
          answer(refusal, taken.close);
          continue;
        }
        // A client calls one session over and over on its connection: the target is compared with the last
        // one as bytes, and decoded and routed only when it (or the method) changes.
        const { targetStart, targetEnd } = taken;
        if (taken.method !== lastMethod || !holdsBytes(data, targetStart, targetEnd, lastTarget)) {
          const target = data.toString("latin1", targetStart, targetEnd);
          lastMethod = taken.method;
          lastTarget = Buffer.from(data.subarray(targetStart, targetEnd));
          lastHandler = options.relays?.(taken.method, target) ? undefined : options.route(taken.method, target);
        }
        if (lastHandler) answerSoon(lastHandler(taken.authorization, data.toString("utf8", bodyStart, total)), taken.close);
        else relayRequest(size === 0 ? data : data.subarray(0, total));
      }
    };

    const sent = (): void => {
      waitingToSend = false;
      drain();
    };

    const drain = (): void => {
      answerBuffered();
      // The client sent its last request: close once every answer is out (node:http's half-close handling).
      if (clientEnded && state.own && !state.busy && !waitingToSend && !socket.writableEnded) socket.end();
    };

    /** Takes a read; `shared` when it lies in the shared read buffer (kept pieces are then copied out). */
    const onData = (chunk: Buffer, shared = false): void => {
      // Answered with `Connection: close`: what the client sends after is not held.
      if (ended) return;
      const now = Date.now();
      state.idleSince = now;
      if (size === 0) {
        // The usual case: a whole request in one read, looked at in place.
        buffered = chunk;
        resize(chunk.length);
        state.requestSince = now;
        return drain();
      }
      resize(size + chunk.length);
      if (budget.held > budget.max) {
        // Too many unfinished requests at once: this one asks for more than is left.
        socket.destroy();
        return;
      }
      if (state.busy || waitingToSend) {
        pieces.push(shared ? Buffer.from(chunk) : chunk);
        return;
      }
      // A request arriving in pieces: each piece is kept as it is and looked at once; they are joined when
      // the head's blank line has come (or the head is too long) and when the body is complete.
      const headDone = head === undefined && (blankLine = blankLineProgress(chunk, 0, chunk.length, blankLine)) >= 4;
      if (head === undefined ? headDone || size > HEAD_LIMIT : size >= head.total) {
        pieces.push(chunk);
        blankLine = 0;
        return drain();
      }
      pieces.push(shared ? Buffer.from(chunk) : chunk);
    };

    /** A read into the shared buffer (adopted sockets). */
    const onRead = (length: number, buffer: Buffer): boolean => {
      // Handed to node:http, which reads the connection itself until it gives it up (an upgrade): a stream again.
      if (!state.own) return socket.push(Buffer.from(buffer.subarray(0, length)));
      onData(buffer.subarray(0, length), true);
      // What is kept for later (a request not complete yet) is copied out: the next read reuses the buffer.
      if (size > 0 && buffered.buffer === buffer.buffer) buffered = Buffer.from(buffered);
      return true;
    };

    const onEnd = (): void => {
      clientEnded = true;
      drain();
    };

    if (!adopted) {
      socket.on("data", onData);
      socket.resume(); // accepted paused (pauseOnConnect), which a 'data' listener alone does not undo
    }
    socket.on("end", onEnd);
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      open.delete(state);
      resize(0);
      buffered = NOTHING;
      pieces = [];
      if (relay && !relay.destroyed) {
        relay.detached = true;
        relay.destroy();
      }
    });
  };

  const stopSweep = sweepDeadlines(open, { keepAliveMilliseconds: options.keepAliveMilliseconds, headMilliseconds, requestMilliseconds, closing });

  return Object.assign(handle, {
    closeAll() {
      stopSweep();
      for (const state of open) state.socket.destroy();
      open.clear();
    },
  });
}
