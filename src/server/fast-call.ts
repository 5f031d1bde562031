import type { IncomingMessage, ServerResponse } from "node:http";
import { errorBody, errorReply, parseObject, tokenMatches, unauthorizedMessage, type ServerApp } from "./app.ts";

/**
 * `POST /sessions/:id/call` straight on node:http, skipping the Fetch-API `Request`/`Response` objects,
 * web streams and abort signals that Hono's Node adapter builds for every request (most of a tool call's
 * CPU time under load). Only plain session ids take this path (no query, no percent-escapes); every other
 * request goes to the Hono app. It keeps the app's guarantees: the bearer token, the body size limit
 * (413 and `Connection: close`), and a 4xx JSON error naming the problem for any bad input.
 */
const callRoute = /^\/sessions\/([A-Za-z0-9_-]{1,200})\/call$/;

function send(response: ServerResponse, status: number, text: string, close = false): void {
  const headers: Record<string, string | number> = { "content-type": "application/json", "content-length": Buffer.byteLength(text) };
  if (close) headers.connection = "close";
  response.writeHead(status, headers);
  response.end(text);
}

function sendError(response: ServerResponse, error: unknown): void {
  const reply = errorReply(error);
  send(response, reply.status, JSON.stringify(reply.body));
}

/** Returns a request listener step: `true` when it took the request, `false` to hand it to the Hono app. */
export function createFastCallHandler(serverApp: ServerApp): (request: IncomingMessage, response: ServerResponse) => boolean {
  const { store } = serverApp;
  const { token, maxBodyBytes } = serverApp.options;
  const tooLarge = JSON.stringify(errorBody("BODY_TOO_LARGE", `request bodies are limited to ${maxBodyBytes} bytes`));
  const unauthorized = JSON.stringify(errorBody("UNAUTHORIZED", unauthorizedMessage));

  const answer = (response: ServerResponse, id: string, text: string): void => {
    let reply: string;
    try {
      const body = parseObject(text);
      reply = JSON.stringify(store.call(id, body.name, body.arguments, body.seq));
    } catch (error) {
      sendError(response, error);
      return;
    }
    send(response, 200, reply);
  };

  return (request, response) => {
    if (request.method !== "POST") return false;
    const match = callRoute.exec(request.url ?? "");
    if (!match) return false;
    const id = match[1] as string;
    if (token && !tokenMatches(token, request.headers.authorization)) {
      send(response, 401, unauthorized);
      return true;
    }
    const declared = request.headers["content-length"];
    if (declared !== undefined && request.headers["transfer-encoding"] === undefined && Number.parseInt(declared, 10) > maxBodyBytes) {
      // The body is not read: tell the client not to reuse this connection.
      send(response, 413, tooLarge, true);
      return true;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on("data", (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > maxBodyBytes) {
        refused = true;
        send(response, 413, tooLarge, true);
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => {
      if (refused) return;
      let text = chunks.length === 1 ? (chunks[0] as Buffer).toString("utf8") : Buffer.concat(chunks, size).toString("utf8");
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // UTF-8 decoding drops a byte-order mark, as Request.text() does
      answer(response, id, text);
    });
    request.on("error", () => response.destroy());
    return true;
  };
}
