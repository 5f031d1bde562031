import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedExchange {
  path: string;
  status: number;
  request: unknown;
  response: unknown;
}

export interface RecordingProxy {
  url: string;
  server: Server;
  exchanges: RecordedExchange[];
  close(): Promise<void>;
}

/**
 * One request on a fresh connection: a pooled keep-alive socket that the upstream (uvicorn closes idle ones
 * after 5 s) shuts while it is being reused would fail the request for a reason the tests are not about.
 */
function forward(url: string, method: string, contentType: string, body: string): Promise<{ status: number; contentType: string; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method, agent: false, headers: { "content-type": contentType, connection: "close" } }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
      incoming.on("error", reject);
      incoming.on("end", () =>
        resolve({
          status: incoming.statusCode ?? 502,
          contentType: String(incoming.headers["content-type"] ?? "application/json"),
          text: Buffer.concat(chunks).toString("utf8"),
        }),
      );
    });
    outgoing.on("error", reject);
    if (method !== "GET" && method !== "HEAD") outgoing.write(body);
    outgoing.end();
  });
}

/**
 * An HTTP proxy on 127.0.0.1 that forwards every request to `upstream` (e.g. `http://127.0.0.1:8000`) and
 * records the JSON request and response bodies, so tests can check exactly what went over the wire.
 */
export async function startRecordingProxy(upstream: string): Promise<RecordingProxy> {
  const exchanges: RecordedExchange[] = [];
  const parse = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8");
      try {
        const reply = await forward(
          `${upstream}${request.url ?? ""}`,
          request.method ?? "GET",
          String(request.headers["content-type"] ?? "application/json"),
          body,
        );
        exchanges.push({ path: request.url ?? "", status: reply.status, request: parse(body), response: parse(reply.text) });
        response.writeHead(reply.status, { "content-type": reply.contentType }).end(reply.text);
      } catch (error) {
        const cause = (error as { cause?: unknown }).cause;
        const message = `${String(error)}${cause ? ` (${String(cause)})` : ""}`;
        exchanges.push({ path: request.url ?? "", status: 502, request: parse(body), response: message });
        response.writeHead(502, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `proxy: ${String(error)}` } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
