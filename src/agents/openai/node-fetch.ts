import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/**
 * The buffered response handed to the OpenAI client: the parts of `Response` it reads (status, ok, url,
 * headers, text/json). Building a real Response wraps the bytes in a web stream, which costs more CPU than
 * the rest of the request.
 */
class BufferedResponse {
  readonly body = null;
  readonly bodyUsed = false;
  readonly redirected = false;
  readonly type = "basic";
  constructor(
    readonly url: string,
    readonly status: number,
    readonly statusText: string,
    readonly headers: Headers,
    private readonly payload: Buffer,
  ) {}
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }
  async text(): Promise<string> {
    return this.payload.toString("utf8");
  }
  async json(): Promise<unknown> {
    return JSON.parse(this.payload.toString("utf8"));
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    return this.payload.buffer.slice(this.payload.byteOffset, this.payload.byteOffset + this.payload.byteLength) as ArrayBuffer;
  }
  clone(): BufferedResponse {
    return new BufferedResponse(this.url, this.status, this.statusText, this.headers, this.payload);
  }
}

/**
 * A minimal `fetch` over node:http with keep-alive connection pools, for the OpenAI client. The harness
 * sends thousands of small JSON requests per second; Node's built-in fetch (undici + web streams) costs
 * several times more CPU per request. Supports what the client uses: method, headers, a string/bytes
 * body, an AbortSignal (rejects with an `AbortError`), and a buffered response.
 */
export function createNodeFetch(options: { maxSockets?: number } = {}): typeof fetch {
  const agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets: options.maxSockets ?? Infinity, scheduling: "lifo" }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: options.maxSockets ?? Infinity, scheduling: "lifo" }),
  };
  const nodeFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
      const signal = init.signal ?? undefined;
      const abortError = () => Object.assign(new Error("The operation was aborted."), { name: "AbortError" });
      if (signal?.aborted) return reject(abortError());
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, key) => {
        headers[key] = value;
      });
      const body = init.body;
      if (body !== undefined && body !== null && typeof body !== "string" && !(body instanceof Uint8Array)) {
        return reject(new TypeError("node fetch: only string or byte bodies are supported"));
      }
      if (body !== undefined && body !== null) headers["content-length"] = String(Buffer.byteLength(body));
      const secure = url.protocol === "https:";
      const request = (secure ? httpsRequest : httpRequest)(url, { method: init.method ?? "GET", headers, agent: secure ? agents.https : agents.http });
      const onAbort = () => request.destroy(abortError());
      signal?.addEventListener("abort", onAbort, { once: true });
      request.once("error", (error) => {
        signal?.removeEventListener("abort", onAbort);
        reject(error);
      });
      request.once("response", (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.once("error", reject);
        response.once("end", () => {
          signal?.removeEventListener("abort", onAbort);
          const responseHeaders = new Headers();
          for (const [key, value] of Object.entries(response.headers)) {
            if (value === undefined) continue;
            for (const item of Array.isArray(value) ? value : [value]) responseHeaders.append(key, item);
          }
          const payload = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
          resolve(new BufferedResponse(url.href, response.statusCode ?? 500, response.statusMessage ?? "", responseHeaders, payload) as unknown as Response);
        });
      });
      request.end(body ?? undefined);
    });
  return nodeFetch as typeof fetch;
}
