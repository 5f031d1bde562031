import { createServer, type Server } from "node:http";
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
        const reply = await fetch(`${upstream}${request.url ?? ""}`, {
          method: request.method,
          headers: { "content-type": String(request.headers["content-type"] ?? "application/json") },
          ...(request.method === "GET" || request.method === "HEAD" ? {} : { body }),
        });
        const text = await reply.text();
        exchanges.push({ path: request.url ?? "", status: reply.status, request: parse(body), response: parse(text) });
        response.writeHead(reply.status, { "content-type": reply.headers.get("content-type") ?? "application/json" }).end(text);
      } catch (error) {
        exchanges.push({ path: request.url ?? "", status: 502, request: parse(body), response: String(error) });
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
