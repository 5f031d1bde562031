import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ServerError, ToolgymError, type AnyEnvironment } from "../core/index.ts";
import { createAccess, unauthorizedMessage, type Access } from "./access.ts";
import { createEnvironmentCatalog, type EnvironmentEntry } from "./env-catalog.ts";
import { resolveExternalConfig, resolveResources, type ResolvedResources, type ServerResources } from "./external-config.ts";
import { SessionStore, describeSession, openConversation, type Session, type SessionAddress } from "./session-store.ts";

const sessionFields = new Set(["env", "split", "seed", "index", "config", "max_turns"]);

export interface ServerAppOptions {
  environments: Record<string, AnyEnvironment>;
  /** When set, every route except `GET /health` needs `Authorization: Bearer <token>`. */
  token?: string;
  /** Several accepted tokens, one per client (each has its own session quota); `token` is one more. */
  tokens?: readonly string[];
  /** The address the server binds (default loopback): requests naming another `Host` get 403. */
  host?: string;
  /** Host names accepted besides the bound address. */
  allowedHosts?: readonly string[];
  /** Origins whose pages may call the server; any other `Origin` gets 403. */
  allowedOrigins?: readonly string[];
  maxSessions?: number;
  /** Most open sessions per client (per token; all clients without a token count as one). Default: maxSessions. */
  maxSessionsPerClient?: number;
  /** Data directories and model endpoints a session config may name (by a path inside, by a name). */
  resources?: ServerResources;
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
  access: Access;
  resources: ResolvedResources;
}

export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

function fail(c: Context, status: number, code: string, message: string): Response {
  return c.json(errorBody(code, message), status as 400);
}

/** Deepest nesting accepted in a request body or frame: tool arguments are shallow, and deeper values would overflow the stack later. */
export const MAX_JSON_DEPTH = 64;

/** Whether a parsed JSON value nests objects and arrays deeper than `limit` (walked without recursion). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const current = stack.pop() as object;
    const depth = depths.pop() as number;
    if (depth > limit) return true;
    for (const key in current) {
      const inner = (current as Record<string, unknown>)[key];
      if (typeof inner === "object" && inner !== null) {
        stack.push(inner);
        depths.push(depth + 1);
      }
    }
  }
  return false;
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
  // Nesting past the limit takes more than two brackets a level: short bodies (most tool calls) are not walked.
  if (text.length > 2 * MAX_JSON_DEPTH && nestsDeeperThan(value, MAX_JSON_DEPTH))
    throw new ServerError({ code: "JSON_TOO_DEEP", status: 400, message: `the request body nests deeper than ${MAX_JSON_DEPTH} levels; send flat values` });
  return value as Record<string, unknown>;
}

/** Reads a JSON object body (see `parseObject`). */
async function readObject(c: Context): Promise<Record<string, unknown>> {
  return parseObject(await c.req.text());
}

/**
 * `POST /sessions` from its parsed body: refuses fields it does not know, then opens the session for
 * `client` (its quota). Shared by the Hono route, the fast path (fast-session.ts) and OpenEnv's reset, so all
 * validate alike. A config naming data files or models resolves them first, asynchronously (external-config.ts).
 */
export function createSession(serverApp: Pick<ServerApp, "store" | "resources">, body: Record<string, unknown>, client: string): Session | Promise<Session> {
  const { store } = serverApp;
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
  const address = body as unknown as SessionAddress;
  const env = store.environment(address.env);
  const external = resolveExternalConfig(env, address.config, serverApp.resources);
  if (!external) return openConversation(store, store.create(address, client));
  store.checkQuota(client);
  return external.then((config) => openConversation(store, store.create({ ...address, config }, client)));
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

export { unauthorizedMessage };

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
    token: options.token ?? options.tokens?.[0],
  };
  const tokens = [...(options.token ? [options.token] : []), ...(options.tokens ?? [])];
  const access = createAccess({ host: options.host ?? "127.0.0.1", tokens, allowedHosts: options.allowedHosts, allowedOrigins: options.allowedOrigins });
  const resources = resolveResources(options.resources);
  const store = new SessionStore({
    environments: options.environments,
    maxSessions: settings.maxSessions,
    maxSessionsPerClient: options.maxSessionsPerClient,
    idleMilliseconds: settings.idleSeconds * 1000,
    idPrefix: options.sessionIdPrefix,
    now: options.now,
  });
  const catalog = createEnvironmentCatalog(options.environments);
  const app = new Hono();
  const serverApp: ServerApp = { app, store, catalog, options: settings, access, resources };

  app.onError((error, c) => {
    const reply = errorReply(error);
    return c.json(reply.body, reply.status as 400);
  });
  app.notFound((c) => fail(c, 404, "ROUTE_UNKNOWN", `no route ${c.req.method} ${new URL(c.req.url).pathname.slice(0, 100)}; see GET /envs and POST /sessions`));

  // Host and Origin before anything else, /health included: a rebinding page must not even learn the server is there.
  app.use("*", async (c, next) => {
    const refusal = access.checkPlace(c.req.header("host"), c.req.header("origin"));
    if (refusal) return fail(c, refusal.status, refusal.code, refusal.message);
    await next();
  });
  app.get("/health", (c) => c.json({ status: "healthy", sessions: store.size, max_sessions: store.maxSessions }));

  // The client a request speaks for; `/ws` may carry the token in its query (browsers' WebSocket API sends no headers).
  app.use("*", async (c, next) => {
    const client = access.identify(c.req.header("authorization"), c.req.path === "/ws" ? c.req.query("token") : undefined);
    if (client === undefined) return fail(c, 401, "UNAUTHORIZED", unauthorizedMessage);
    c.set("client" as never, client as never);
    await next();
  });
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

  app.post("/sessions", async (c) => c.json(describeSession(await createSession(serverApp, await readObject(c), c.get("client" as never) as string)), 201));
  app.get("/sessions/:id", (c) => {
    const session = store.get(c.req.param("id"));
    return c.json({ ...describeSession(session), done: session.driver.episode.done, calls: session.calls });
  });
  app.post("/sessions/:id/call", async (c) => {
    const body = await readObject(c);
    return c.json(await store.call(c.req.param("id"), body.name, body.arguments, body.seq));
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

  return serverApp;
}
