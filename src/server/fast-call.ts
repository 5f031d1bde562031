import type { IncomingMessage, ServerResponse } from "node:http";
import { discardLimitBytes, discardsBody, errorBody, errorReply, parseObject, unauthorizedMessage, type ServerApp } from "./app.ts";
import type { CallOutcome } from "./session-store.ts";

/**
 * `POST /sessions/:id/call` without Hono: the Fetch-API `Request`/`Response` objects, web streams and abort
 * signals that Hono's Node adapter builds for every request are most of a tool call's CPU time under load.
 * Only plain session ids take this path (no query, no percent-escapes); every other request goes to the Hono
 * app. It keeps the app's guarantees: the bearer token, the body size limit (413, the body drained or the connection closed),
 * and a 4xx JSON error naming the problem for any bad input. `createCallAnswerer` is the answer itself, shared
 * by the node:http handler here and the socket-level reader in http-connection.ts.
 */
export const callRoute = /^\/sessions\/([A-Za-z0-9_-]{1,200})\/call$/;

export interface CallAnswer {
  status: number;
  /** The JSON body. */
  text: string;
  /** Its length in UTF-8 bytes (the Content-Length). */
  bytes: number;
}

function jsonAnswer(status: number, text: string): CallAnswer {
  return { status, text, bytes: Buffer.byteLength(text) };
}

const CONTENT = '{"content":';
const IS_ERROR = ',"is_error":';
const ERROR_KIND = ',"error_kind":';
const DONE = ',"done":';
const CALLS = ',"calls":';
const FIXED_BYTES = CONTENT.length + IS_ERROR.length + DONE.length + CALLS.length + "}".length;

/**
 * The 200 answer to a tool call: `JSON.stringify(outcome)`, byte for byte, written out field by field, and
 * its byte length summed from the pieces. Why: about half the cost of the generic serializer walking the
 * object, and the joined text is never measured (measuring a joined string flattens it into a copy first);
 * it runs for every tool call. Anything not of the expected types goes to `JSON.stringify` itself. The
 * fields are those `SessionStore.call` returns, in its order (the parity test compares these answers with
 * the Hono route's `JSON.stringify`).
 */
export function outcomeAnswer(outcome: CallOutcome): CallAnswer {
  const { content, is_error: isError, error_kind: errorKind, done, calls } = outcome;
  if (
    typeof content !== "string" ||
    typeof isError !== "boolean" ||
    typeof done !== "boolean" ||
    !Number.isSafeInteger(calls) ||
    (errorKind !== undefined && typeof errorKind !== "string")
  )
    return jsonAnswer(200, JSON.stringify(outcome));
  const contentJson = JSON.stringify(content);
  const kindJson = errorKind === undefined ? undefined : JSON.stringify(errorKind);
  const callsText = String(calls);
  const text = `${CONTENT}${contentJson}${IS_ERROR}${isError}${kindJson === undefined ? "" : ERROR_KIND + kindJson}${DONE}${done}${CALLS}${callsText}}`;
  // The literals, booleans and digits are ASCII: one byte a character.
  const bytes =
    FIXED_BYTES +
    Buffer.byteLength(contentJson) +
    (kindJson === undefined ? 0 : ERROR_KIND.length + Buffer.byteLength(kindJson)) +
    (isError ? 4 : 5) +
    (done ? 4 : 5) +
    callsText.length;
  return { status: 200, text, bytes };
}

/** Answers one tool call from its session id, `Authorization` header and body (UTF-8 decoded); never throws. */
export function createCallAnswerer(serverApp: ServerApp): (id: string, authorization: string | undefined, body: string) => CallAnswer | Promise<CallAnswer> {
  const { store, access } = serverApp;
  const unauthorized = jsonAnswer(401, JSON.stringify(errorBody("UNAUTHORIZED", unauthorizedMessage)));
  return (id, authorization, body) => {
    if (access.needsToken && access.identify(authorization) === undefined) return unauthorized;
    let text = body;
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // UTF-8 decoding drops a byte-order mark, as Request.text() does
    const failure = (error: unknown): CallAnswer => {
      const reply = errorReply(error);
      return jsonAnswer(reply.status, JSON.stringify(reply.body));
    };
    try {
      const parsed = parseObject(text);
      const outcome = store.call(id, parsed.name, parsed.arguments, parsed.seq);
      // A call answered with I/O (a simulated user's reply) comes back later; every other one now.
      return outcome instanceof Promise ? outcome.then(outcomeAnswer, failure) : outcomeAnswer(outcome);
    } catch (error) {
      return failure(error);
    }
  };
}

function send(response: ServerResponse, status: number, text: string, close = false): void {
  const headers: Record<string, string | number> = { "content-type": "application/json", "content-length": Buffer.byteLength(text) };
  if (close) headers.connection = "close";
  response.writeHead(status, headers);
  response.end(text);
}

/**
 * Returns a request listener step: `true` when it took the request (a tool call, or any declared body over
 * the limit), `false` to hand it to the Hono app.
 */
export function createFastCallHandler(serverApp: ServerApp): (request: IncomingMessage, response: ServerResponse) => boolean {
  const { access } = serverApp;
  const { maxBodyBytes } = serverApp.options;
  const unauthorizedRequest = (request: IncomingMessage): boolean => access.needsToken && access.identify(request.headers.authorization) === undefined;
  const answerCall = createCallAnswerer(serverApp);
  const tooLarge = JSON.stringify(errorBody("BODY_TOO_LARGE", `request bodies are limited to ${maxBodyBytes} bytes`));
  const unauthorized = JSON.stringify(errorBody("UNAUTHORIZED", unauthorizedMessage));

  return (request, response) => {
    const declared = request.headers["content-length"];
    const oversized = declared !== undefined && request.headers["transfer-encoding"] === undefined && Number.parseInt(declared, 10) > maxBodyBytes;
    const match = request.method === "POST" ? callRoute.exec(request.url ?? "") : null;
    if (!match) {
      // A declared oversized body on any route is refused here rather than by Hono's bodyLimit: Hono's Node
      // adapter drains an unread body for only half a second before resetting the connection, which a client
      // still uploading on a busy machine sees as EPIPE instead of this 413. The token is Hono's to check first.
      const bodied = request.method !== "GET" && request.method !== "HEAD";
      if (!oversized || !bodied || unauthorizedRequest(request)) return false;
      send(response, 413, tooLarge, !discardsBody(declared));
      return true;
    }
    const id = match[1] as string;
    // Checked before the body is read, so an unauthorised client cannot make the server buffer a body.
    if (unauthorizedRequest(request)) {
      send(response, 401, unauthorized);
      return true;
    }
    if (oversized) {
      // node:http drains the unread body after the answer when the connection stays open (see discardsBody).
      send(response, 413, tooLarge, !discardsBody(declared));
      return true;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (refused) {
        // A chunked body is read and dropped after the 413, up to the same bound as a declared one.
        if (size > discardLimitBytes) request.socket.destroy();
        return;
      }
      if (size > maxBodyBytes) {
        refused = true;
        send(response, 413, tooLarge);
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => {
      if (refused) return;
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
      const reply = answerCall(id, request.headers.authorization, body.toString("utf8"));
      if (reply instanceof Promise) void reply.then((ready) => send(response, ready.status, ready.text));
      else send(response, reply.status, reply.text);
    });
    request.on("error", () => response.destroy());
    return true;
  };
}
