import { timingSafeEqual } from "node:crypto";
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ServerError, ToolgymError, type AnyEnvironment } from "../core/index.ts";
import { createEnvironmentCatalog, type EnvironmentEntry } from "./env-catalog.ts";
import { SessionStore, describeSession, type Session, type SessionAddress } from "./session-store.ts";

const sessionFields = new Set(["env", "split", "seed", "index", "config", "max_turns"]);

export interface ServerAppOptions {
  environments: Record<string, AnyEnvironment>;
  /** When set, every route except `GET /health` needs `Authorization: Bearer <token>`. */
  token?: string;
  maxSessions?: number;
  /** Idle sessions are closed after this many seconds (default 600). */
  idleSeconds?: number;
  /** Largest accepted request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Prepended to session ids (the worker's `w<index>-` under `toolgym serve --workers`). */
  sessionIdPrefix?: string;
  now?: () => number;
}

export interface ServerApp {
  app: Hono;
  store: SessionStore;
  catalog: { list(): EnvironmentEntry[]; get(id: string): EnvironmentEntry | undefined };
  options: Required<Pick<ServerAppOptions, "maxSessions" | "idleSeconds" | "maxBodyBytes">> & { token?: string };
}

export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

function fail(c: Context, status: number, code: string, message: string): Response {
  return c.json(errorBody(code, message), status as 400);
}

/** Parses a request body that must be a JSON object; empty text counts as `{}`. Anything else throws a 400 naming the problem. */
export function parseObject(text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ServerError({
      code: "INVALID_JSON",
      status: 400,
      message: `the request body is not valid JSON (${(error as Error).message.slice(0, 120)}); send a JSON object`,
    });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ServerError({ code: "INVALID_BODY", status: 400, message: "the request body must be a JSON object" });
  }
  return value as Record<string, unknown>;
}

/** Reads a JSON object body (see `parseObject`). */
async function readObject(c: Context): Promise<Record<string, unknown>> {
  return parseObject(await c.req.text());
}

/**
 * `POST /sessions` from its parsed body: refuses fields it does not know, then opens the session. Shared by
 * the Hono route and the fast path (fast-session.ts), so both validate alike.
 */
export function createSession(store: SessionStore, body: Record<string, unknown>): Session {
  const unknown = Object.keys(body).filter((key) => !sessionFields.has(key));
  if (unknown.length > 0)
    throw new ServerError({
      code: "UNKNOWN_FIELD",
      status: 400,
      message: `unknown field(s) ${unknown
        .slice(0, 5)
        .map((key) => `'${key.slice(0, 40)}'`)
        .join(", ")}; a session is created from env, split, seed, index, config, max_turns`,
    });
  return store.create(body as unknown as SessionAddress);
}

/** `DELETE /sessions/:id`: closes the session, or throws SESSION_UNKNOWN (404) when there is none. */
export function closeSession(store: SessionStore, id: string): void {
  if (!store.close(id)) store.get(id);
}

/** The status and JSON error body for anything a route throws: 4xx for `ToolgymError`s, 500 only for real bugs. */
export function errorReply(error: unknown): { status: number; body: ReturnType<typeof errorBody> } {
  if (ToolgymError.isInstance(error) && error instanceof ServerError) return { status: error.status, body: errorBody(error.code, error.message) };
  if (ToolgymError.isInstance(error)) return { status: 400, body: errorBody(error.code, error.message) };
  return { status: 500, body: errorBody("INTERNAL", `unexpected server error: ${(error as Error)?.message ?? String(error)}; please report it`) };
}

/** The 401 message for a missing or wrong token (HTTP routes and the fast tool-call path). */
export const unauthorizedMessage = "missing or wrong bearer token; send 'Authorization: Bearer <token>' with the token given to 'toolgym serve --token'";

/**
 * Bodies past the limit but declared at most this long are read and thrown away after the 413 (node:http
 * drains a request its handler left unread), so the connection stays usable. Why: a client is usually
 * still sending when the 413 goes out; closing then resets the connection and the client sees a write
 * error (EPIPE) instead of the answer. Longer declared bodies close the connection at once.
 */
export const discardLimitBytes = 64 * 1024 * 1024;

/** Whether a refused body of this declared length is drained (else the connection closes). */
export function discardsBody(contentLength: string | undefined): boolean {
  if (contentLength === undefined) return false;
  const length = Number(contentLength);
  return Number.isSafeInteger(length) && length <= discardLimitBytes;
}

export function tokenMatches(expected: string, header: string | undefined | null): boolean {
  if (!header || !header.startsWith("Bearer ")) return false;
  const given = Buffer.from(header.slice(7));
  const wanted = Buffer.from(expected);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/**
 * The toolgym environment server as a Hono app (no sockets: `app.request()` drives it in tests).
 * Routes: health, environments with tool schemas, sessions (create, call, reward, close), stats.
 * `startServer` answers `POST /sessions/:id/call` on a faster path (fast-call.ts) with the same behaviour.
 */
export function createServerApp(options: ServerAppOptions): ServerApp {
  const settings = {
    maxSessions: options.maxSessions ?? 1024,
    idleSeconds: options.idleSeconds ?? 600,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    token: options.token,
  };
  const store = new SessionStore({
    environments: options.environments,
    maxSessions: settings.maxSessions,
    idleMilliseconds: settings.idleSeconds * 1000,
    idPrefix: options.sessionIdPrefix,
    now: options.now,
  });
  const catalog = createEnvironmentCatalog(options.environments);
  const app = new Hono();

  app.onError((error, c) => {
    const reply = errorReply(error);
    return c.json(reply.body, reply.status as 400);
  });
  app.notFound((c) => fail(c, 404, "ROUTE_UNKNOWN", `no route ${c.req.method} ${new URL(c.req.url).pathname.slice(0, 100)}; see GET /envs and POST /sessions`));

  app.get("/health", (c) => c.json({ status: "healthy", sessions: store.size, max_sessions: store.maxSessions }));

  if (settings.token) {
    const token = settings.token;
    app.use("*", async (c, next) => {
      if (!tokenMatches(token, c.req.header("authorization"))) {
        return fail(c, 401, "UNAUTHORIZED", unauthorizedMessage);
      }
      await next();
    });
  }
  app.use(
    "*",
    bodyLimit({
      maxSize: settings.maxBodyBytes,
      onError: (c) => {
        if (!discardsBody(c.req.header("content-length"))) c.header("Connection", "close");
        return fail(c, 413, "BODY_TOO_LARGE", `request bodies are limited to ${settings.maxBodyBytes} bytes`);
      },
    }),
  );

  app.get("/envs", (c) => c.json({ environments: catalog.list() }));
  app.get("/envs/:id", (c) => {
    const entry = catalog.get(c.req.param("id"));
    if (!entry) store.environment(c.req.param("id"));
    return c.json(entry);
  });
  app.get("/stats", (c) => c.json({ open_sessions: store.size, max_sessions: store.maxSessions, ...store.counters }));

  app.post("/sessions", async (c) => c.json(describeSession(createSession(store, await readObject(c))), 201));
  app.get("/sessions/:id", (c) => {
    const session = store.get(c.req.param("id"));
    return c.json({ ...describeSession(session), done: session.driver.episode.done, calls: session.calls });
  });
  app.post("/sessions/:id/call", async (c) => {
    const body = await readObject(c);
    return c.json(store.call(c.req.param("id"), body.name, body.arguments, body.seq));
  });
  app.get("/sessions/:id/reward", async (c) => c.json(await store.reward(c.req.param("id"), c.req.query("ended_by"))));
  app.post("/sessions/:id/reward", async (c) => {
    const body = await readObject(c);
    return c.json(await store.reward(c.req.param("id"), body.ended_by));
  });
  app.delete("/sessions/:id", (c) => {
    closeSession(store, c.req.param("id"));
    return c.json({ closed: true });
  });

  return { app, store, catalog, options: settings };
}
