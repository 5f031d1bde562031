import { STATUS_CODES, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import { Socket, type SocketConstructorOpts } from "node:net";
import { Duplex } from "node:stream";
import type { CallAnswer } from "./fast-call.ts";
import { headEnd, parseRequestHead, type RequestHead } from "./http-head.ts";

/**
 * Reads HTTP/1.1 straight off each TCP connection and answers tool calls (and session create and close,
 * fast-session.ts) itself. Why: for a tool call of a few hundred bytes, node:http's per-request objects (an
 * IncomingMessage stream, a ServerResponse stream, header objects, timers) cost more server CPU than the
 * rest of the call; under the bench load a trivial node:http handler alone takes about twice the CPU per
 * request of a reader on the raw socket.
 *
 * Everything but a well-formed tool call, create or close keeps node:http's behaviour, byte for byte:
 * - a request this reader can frame (a `Content-Length` body within the limit) that it does not answer is
 *   passed, as received, to the node:http server through a per-connection in-memory stream (`Relay`), and
 *   the response bytes come back to the socket (rewards, session reads, routing between workers, ...);
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
   * The session id when `POST <target>` is a tool call this process answers itself; else undefined. Its
   * text is a function of `target` alone: each connection remembers the answer for the last target it saw.
   */
  callTarget(target: string): string | undefined;
  answerCall(id: string, authorization: string | undefined, body: string): CallAnswer;
  /**
   * For a request that is not a tool call: its answerer when this process answers it itself (session create
   * and close, fast-session.ts), else undefined to pass it on.
   */
  otherRoute?(method: string, target: string): ((authorization: string | undefined, body: string) => CallAnswer) | undefined;
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

/** node:http's default limit on a request head (`--max-http-header-size`); longer heads are node's to refuse. */
const HEAD_LIMIT = 16 * 1024;

const NOTHING: Buffer = Buffer.alloc(0);

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

/** The in-memory connection a relayed request reaches node:http through; what node:http writes goes to the socket. */
class Relay extends Duplex {
  /** The response to the request in flight has been written. */
  onResponseDone: () => void = () => undefined;
  detached = false;

  constructor(private readonly socket: Socket) {
    super();
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.socket.write(chunk, callback);
  }

  override _final(callback: () => void): void {
    this.socket.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // node:http destroys its connection after a response it cannot follow (a parse error): flush, then close.
    if (!this.detached) this.socket.destroySoon();
    callback(error);
  }
}

let dateText: string | undefined;
/**
 * The `Date` header node:http sends: made once a second, and forgotten by a timer at the next second (as
 * node:http does), so an answer reads it without asking the clock.
 */
function httpDate(): string {
  if (dateText === undefined) {
    const now = new Date();
    dateText = now.toUTCString();
    setTimeout(() => (dateText = undefined), 1000 - now.getMilliseconds()).unref();
  }
  return dateText;
}

/** A tool-call answer's status line and headers up to the Content-Length value, by status (a handful of statuses). */
const statusPrefixes = new Map<number, string>();
function statusPrefix(status: number): string {
  let prefix = statusPrefixes.get(status);
  if (prefix === undefined) {
    prefix = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: `;
    statusPrefixes.set(status, prefix);
  }
  return prefix;
}

export function createConnectionHandler(options: ConnectionHandlerOptions): ConnectionHandler {
  const { http, answerCall } = options;
  const keepAlive = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(options.keepAliveMilliseconds / 1000)}\r\n\r\n`;
  // The headers after Content-Length, rebuilt when the Date changes (once a second) rather than per answer.
  let keepAliveDate = "";
  let keepAliveTail = "";
  const keepingAlive = (): string => {
    const date = httpDate();
    if (date !== keepAliveDate) {
      keepAliveDate = date;
      keepAliveTail = `\r\nDate: ${date}\r\n${keepAlive}`;
    }
    return keepAliveTail;
  };
  const closing = (): string => `\r\nDate: ${httpDate()}\r\nConnection: close\r\n\r\n`;
  /** Every connection; `own` while this reader has it (node:http times out the ones handed to it). */
  const open = new Set<{ socket: Socket; idleSince: number; busy: boolean; own: boolean }>();

  // A relayed response has been written once its ServerResponse finishes (or is torn down).
  http.prependListener("request", (request: IncomingMessage, response: ServerResponse) => {
    const relay = request.socket;
    if (!(relay instanceof Relay)) return;
    const done = relay.onResponseDone;
    response.once("finish", done);
    response.once("close", done);
  });

  const handle = (accepted: Socket): void => {
    const adopted = options.sharedReadBuffer === false ? undefined : adopt(accepted, (length, buffer) => onRead(length, buffer));
    const socket = adopted ?? accepted;
    socket.setNoDelay(true);
    const state = { socket, idleSince: Date.now(), busy: false, own: true };
    open.add(state);
    /** Bytes received and not yet answered or passed on; `size` is its length. */
    let buffered = NOTHING;
    let size = 0;
    let head: RequestHead | undefined;
    let relay: Relay | undefined;
    let clientEnded = false;
    let lastTarget = NOTHING;
    let lastCallId: string | undefined;

    const handOff = (): void => {
      socket.removeListener("data", onData);
      socket.removeListener("end", onEnd);
      state.own = false;
      if (relay) {
        relay.detached = true;
        relay.destroy();
      }
      socket.pause();
      if (size > 0) socket.unshift(Buffer.from(buffered)); // a copy: it may lie in the shared read buffer
      buffered = NOTHING;
      size = 0;
      http.emit("connection", socket);
      socket.resume();
    };

    const answer = (reply: CallAnswer, close: boolean): void => {
      // One string, so one write and one send: the head and body never leave in separate packets.
      socket.write(statusPrefix(reply.status) + reply.bytes + (close ? closing() : keepingAlive()) + reply.text);
      if (close) socket.end();
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

    /** Answers or passes on the complete requests buffered, in order, until one is in flight. */
    const answerBuffered = (): void => {
      while (size > 0 && !state.busy && !socket.writableEnded && !socket.destroyed) {
        const data = buffered;
        if (!head) {
          const end = headEnd(data, Math.min(size, HEAD_LIMIT + 4));
          if (end < 0 ? size > HEAD_LIMIT : end > HEAD_LIMIT) return handOff();
          if (end < 0) return;
          head = parseRequestHead(data, end, options.maxBodyBytes);
          if (!head) return handOff();
        }
        const { total, bodyStart } = head;
        if (size < total) return;
        const taken = head;
        head = undefined;
        if (size === total) {
          buffered = NOTHING;
          size = 0;
        } else {
          buffered = data.subarray(total);
          size -= total;
        }
        let callId: string | undefined;
        if (taken.method === "POST" && taken.plain) {
          // A client calls one session over and over on its connection: the target is compared with the
          // last one as bytes, and decoded and matched only when it changes.
          const { targetStart, targetEnd } = taken;
          if (!holdsBytes(data, targetStart, targetEnd, lastTarget)) {
            lastTarget = Buffer.from(data.subarray(targetStart, targetEnd));
            lastCallId = options.callTarget(data.toString("latin1", targetStart, targetEnd));
          }
          callId = lastCallId;
        }
        if (callId !== undefined) {
          answer(answerCall(callId, taken.authorization, data.toString("utf8", bodyStart, total)), taken.close);
          continue;
        }
        const other =
          taken.plain && options.otherRoute ? options.otherRoute(taken.method, data.toString("latin1", taken.targetStart, taken.targetEnd)) : undefined;
        if (other) answer(other(taken.authorization, data.toString("utf8", bodyStart, total)), taken.close);
        else relayRequest(size === 0 ? data : data.subarray(0, total));
      }
    };

    const drain = (): void => {
      answerBuffered();
      // The client sent its last request: close once every answer is out (node:http's half-close handling).
      if (clientEnded && state.own && !state.busy && !socket.writableEnded) socket.end();
    };

    const onData = (chunk: Buffer): void => {
      // Joined at once: the reader looks at everything received on each arrival anyway.
      buffered = size === 0 ? chunk : Buffer.concat([buffered, chunk], size + chunk.length);
      size += chunk.length;
      state.idleSince = Date.now();
      drain();
    };

    /** A read into the shared buffer (adopted sockets). */
    const onRead = (length: number, buffer: Buffer): boolean => {
      // Handed to node:http, which reads the connection itself until it gives it up (an upgrade): a stream again.
      if (!state.own) return socket.push(Buffer.from(buffer.subarray(0, length)));
      onData(buffer.subarray(0, length));
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
      if (relay && !relay.destroyed) {
        relay.detached = true;
        relay.destroy();
      }
    });
  };

  // Closes connections idle longer than the keep-alive timeout; one timer for all instead of one per socket.
  const sweep = setInterval(
    () => {
      const limit = Date.now() - options.keepAliveMilliseconds;
      for (const state of open) if (state.own && !state.busy && state.idleSince < limit) state.socket.destroy();
    },
    Math.min(10_000, options.keepAliveMilliseconds),
  );
  sweep.unref();

  return Object.assign(handle, {
    closeAll() {
      clearInterval(sweep);
      for (const state of open) state.socket.destroy();
      open.clear();
    },
  });
}
