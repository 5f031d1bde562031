import { Pool, type Dispatcher } from "undici";

/** A finished HTTP exchange: the status and the whole body as text. */
export interface TransportResponse {
  status: number;
  text: string;
}

/**
 * Posts JSON to one OpenAI-compatible server. Rejects only on transport failures (connection refused or
 * reset, time-out, abort); any HTTP status resolves, and the caller classifies it.
 */
export interface ChatTransport {
  post(path: string, body: string, signal?: AbortSignal): Promise<TransportResponse>;
  close(): Promise<void>;
}

export interface TransportOptions {
  /** Sent as `Authorization: Bearer …`; held in memory only. */
  apiKey: string;
  /** Per-request time-out in ms (time to the response headers, and between body chunks). */
  timeoutMs: number;
  /** The largest reply body accepted, in bytes (default DEFAULT_MAX_REPLY_BYTES); a longer one is cut off and refused. */
  maxReplyBytes?: number;
}

/**
 * The default cap on one reply's body: 4 MiB. A chat completion of 32k tokens is well under 1 MiB; a server
 * that sends more is broken or adversarial, and without a cap 50 MB replies drove the harness past 3 GB.
 */
export const DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024;

/** The error a reply over the size cap rejects with; the agent records it as the model's failure (`reply_too_large`). */
export class ReplyTooLargeError extends Error {
  readonly code = "REPLY_TOO_LARGE";
  constructor(readonly limit: number) {
    super(`the reply was larger than ${limit} bytes (--max-reply-mb)`);
    this.name = "ReplyTooLargeError";
  }
}

/** The error a time-out rejects with (fetch transport; undici's own carry code UND_ERR_HEADERS_TIMEOUT). */
export class TransportTimeoutError extends Error {
  readonly code = "TIMEOUT";
  constructor(timeoutMs: number) {
    super(`no response within ${timeoutMs} ms`);
    this.name = "TimeoutError";
  }
}

/**
 * The requests in flight under each signal, with one "abort" listener per signal. Why not a listener per
 * request: EventTarget's addEventListener scans the listeners already there for a duplicate, so with a run's
 * hundreds of requests in flight under one signal it was ~4% of the harness's CPU per model turn.
 */
const inFlight = new WeakMap<AbortSignal, Set<CollectingHandler>>();

function watch(signal: AbortSignal, handler: CollectingHandler): void {
  let handlers = inFlight.get(signal);
  if (!handlers) {
    const created = new Set<CollectingHandler>();
    signal.addEventListener(
      "abort",
      () => {
        for (const each of [...created]) each.cancel();
        created.clear();
      },
      { once: true },
    );
    inFlight.set(signal, created);
    handlers = created;
  }
  handlers.add(handler);
}

function unwatch(signal: AbortSignal, handler: CollectingHandler): void {
  inFlight.get(signal)?.delete(handler);
}

/**
 * Collects one response for `Pool.dispatch`: the raw handler API skips the Readable stream that
 * `Pool.request` builds per response, which is most of a small request's client-side CPU.
 */
class CollectingHandler implements Dispatcher.DispatchHandlers {
  private status = 0;
  private chunks: Buffer[] = [];
  private size = 0;
  private abort: ((reason?: Error) => void) | undefined;

  constructor(
    private readonly resolve: (response: TransportResponse) => void,
    private readonly reject: (error: unknown) => void,
    private readonly signal: AbortSignal | undefined,
    private readonly maxBytes: number,
  ) {
    if (signal) watch(signal, this);
  }

  /** The run's signal fired: abort the request (before it connected, `onConnect` does it). */
  cancel(): void {
    this.abort?.(this.signal?.reason as Error | undefined);
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.abort = abort;
    if (this.signal?.aborted) abort(this.signal.reason as Error);
  }

  onHeaders(status: number): boolean {
    this.status = status;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      // What arrived is dropped at once; the connection is aborted, and onError rejects with the reason.
      this.chunks = [];
      this.abort?.(new ReplyTooLargeError(this.maxBytes));
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.signal) unwatch(this.signal, this);
    const payload = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    this.resolve({ status: this.status, text: payload.toString("utf8") });
  }

  onError(error: Error): void {
    if (this.signal) unwatch(this.signal, this);
    this.reject(error);
  }
}

/**
 * The default transport: an undici connection pool per server (keep-alive with undici's short idle
 * time-out, which stays under uvicorn's 5 s; no limit on connections; HTTP/1.1). Headers are built
 * once; each request is one `dispatch` with a buffered body.
 */
export function createPoolTransport(baseUrl: string, options: TransportOptions): ChatTransport {
  const url = new URL(baseUrl);
  const prefix = url.pathname.replace(/\/$/, "");
  const query = url.search;
  const pool = new Pool(url.origin, {
    connections: null,
    pipelining: 1,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const headers = ["content-type", "application/json", "accept", "application/json", "authorization", `Bearer ${options.apiKey}`];
  const maxBytes = options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
  return {
    post(path, body, signal) {
      return new Promise<TransportResponse>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        pool.dispatch(
          { origin: url.origin, path: `${prefix}${path}${query}`, method: "POST", headers, body },
          new CollectingHandler(resolve, reject, signal, maxBytes),
        );
      });
    },
    close: () => pool.close(),
  };
}

/** A transport over a `fetch` function (tests, proxies, custom agents): slower, but any fetch works. */
export function createFetchTransport(baseUrl: string, fetchImpl: typeof fetch, options: TransportOptions): ChatTransport {
  const url = new URL(baseUrl);
  const prefix = `${url.origin}${url.pathname.replace(/\/$/, "")}`;
  const query = url.search;
  const headers = { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${options.apiKey}` };
  return {
    async post(path, body, signal) {
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new TransportTimeoutError(options.timeoutMs)), options.timeoutMs);
      try {
        const response = await fetchImpl(`${prefix}${path}${query}`, {
          method: "POST",
          headers,
          body,
          signal: signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal,
        });
        return { status: response.status, text: await readCapped(response, options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES) };
      } catch (error) {
        if (timeout.signal.aborted && !signal?.aborted) throw timeout.signal.reason;
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
    close: async () => {},
  };
}

/** A fetch response's body as text, refused (and the rest left unread) past `maxBytes`. */
export async function readCapped(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel();
      throw new ReplyTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
