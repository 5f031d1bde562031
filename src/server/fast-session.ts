import { closeSession, createSession, errorBody, errorReply, parseObject, unauthorizedMessage, type ServerApp } from "./app.ts";
import type { CallAnswer } from "./fast-call.ts";
import { describeSession } from "./session-store.ts";

/**
 * `POST /sessions` (create) and `DELETE /sessions/:id` (close) without Hono, for http-connection.ts. Why: a
 * trainer opens and closes a session per rollout, and through Hono's Node adapter (a Fetch-API request, a
 * web stream, an abort signal and the body-limit middleware per request) the pair cost about as much server
 * CPU as thirty tool calls. The answers are the Hono routes' own: the same checks in the same order (bearer
 * token, then the body through `parseObject`, then `createSession` / `closeSession` from app.ts) and
 * `JSON.stringify` of the same objects. Only the plain cases come here: the exact target `/sessions`, or a
 * session id of `[A-Za-z0-9_-]` without query or percent-escapes; bodies over the limit, chunked bodies and
 * every other target are framed and answered by node:http and Hono as before.
 */
export const sessionRoute = /^\/sessions\/([A-Za-z0-9_-]{1,200})$/;

/**
 * Answers one request from its `Authorization` header and body (UTF-8 decoded); never throws (a promise
 * that never rejects when the session's config names data files to load first).
 */
export type SessionAnswer = (authorization: string | undefined, body: string) => CallAnswer | Promise<CallAnswer>;

function jsonAnswer(status: number, text: string): CallAnswer {
  return { status, text, bytes: Buffer.byteLength(text) };
}

function failure(error: unknown): CallAnswer {
  const reply = errorReply(error);
  return jsonAnswer(reply.status, JSON.stringify(reply.body));
}

/**
 * Returns the answerer for `method` and `target` when this path takes the request, else undefined.
 * `owns(target)` says whether the session a `DELETE` names lives in this process (a worker of `--workers`
 * passes other workers' sessions on through node:http).
 */
export function createSessionRoutes(serverApp: ServerApp, owns: (target: string) => boolean): (method: string, target: string) => SessionAnswer | undefined {
  const { store, access } = serverApp;
  const unauthorized = jsonAnswer(401, JSON.stringify(errorBody("UNAUTHORIZED", unauthorizedMessage)));
  const closed = jsonAnswer(200, JSON.stringify({ closed: true }));

  const create: SessionAnswer = (authorization, body) => {
    const client = access.identify(authorization);
    if (client === undefined) return unauthorized;
    // UTF-8 decoding drops a byte-order mark, as Request.text() does.
    const text = body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
    try {
      const session = createSession(serverApp, parseObject(text), client);
      if (session instanceof Promise) return session.then((opened) => jsonAnswer(201, JSON.stringify(describeSession(opened))), failure);
      return jsonAnswer(201, JSON.stringify(describeSession(session)));
    } catch (error) {
      return failure(error);
    }
  };

  const close = (id: string): SessionAnswer => {
    return (authorization) => {
      if (access.needsToken && access.identify(authorization) === undefined) return unauthorized;
      try {
        closeSession(store, id);
        return closed;
      } catch (error) {
        return failure(error);
      }
    };
  };

  return (method, target) => {
    if (method === "POST") return target === "/sessions" ? create : undefined;
    if (method !== "DELETE") return undefined;
    const match = sessionRoute.exec(target);
    return match && owns(target) ? close(match[1] as string) : undefined;
  };
}
