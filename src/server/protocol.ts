import { ServerError, type AnyEnvironment } from "../core/index.ts";
import { createAccess, unauthorizedMessage, type Access } from "./access.ts";
import { errorAnswer, failure, jsonAnswer, outcomeAnswer, parseConfigText, parseObject, type Answer } from "./answers.ts";
import { createEnvironmentCatalog, type EnvironmentEntry } from "./env-catalog.ts";
import { checkModelOptions, resolveExternalConfig, resolveResources, type ResolvedResources, type ServerResources } from "./external-config.ts";
import { SessionStore, describeSession, openConversation, type CallOutcome, type Session, type SessionAddress } from "./session-store.ts";

/**
 * The one protocol core of `toolgym serve`: `answer(request) → answer` for every HTTP route (the route table,
 * Host/Origin and token checks, body validation, the JSON answers), pure of sockets. Every transport calls
 * it — the socket reader (http-connection.ts), node:http where it frames what the reader leaves it
 * (node-transport.ts), the OpenEnv WebSocket (openenv-protocol.ts: its frames parsed as
 * bodies are, sessions through `createSession`, tool calls through `callTool`) — and tests call
 * it directly. Transports only frame bytes: they enforce the body size limit while reading (`tooLarge`).
 */
export interface ProtocolOptions {
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

/** One request as a transport read it; `target` is the request target (path and query), `body` UTF-8 text. */
export interface ProtocolRequest {
  method: string;
  target: string;
  host?: string;
  origin?: string;
  authorization?: string;
  body?: string;
}

/** A route's answer from the request's `Authorization` header and body; never throws (a promise never rejects). */
export type Handler = (authorization: string | undefined, body: string) => Answer | Promise<Answer>;

export interface Protocol {
  store: SessionStore;
  catalog: { list(): EnvironmentEntry[]; get(id: string): EnvironmentEntry | undefined };
  options: { maxSessions: number; idleSeconds: number; maxBodyBytes: number; token?: string };
  access: Access;
  resources: ResolvedResources;
  /** The whole answer: Host and Origin, the token, the body's size, then the route. */
  answer(request: ProtocolRequest): Answer | Promise<Answer>;
  /** The 403 for a request whose `Host` or `Origin` is not allowed, else undefined. */
  checkPlace(host: string | undefined, origin: string | undefined): Answer | undefined;
  /**
   * The handler of `method` and `target`, a function of those two alone: a transport may keep it for the
   * next request with the same target (a trainer calls one session over and over on its connection).
   */
  route(method: string, target: string): Handler;
  /** The 401 a request to `target` gets before its body is read, else undefined (checked before buffering a body). */
  refuseEarly(method: string, target: string, authorization: string | undefined): Answer | undefined;
  /** The answer to a body over `maxBodyBytes`. */
  tooLarge: Answer;
  /**
   * A tool call from its request's fields (`name`, `arguments`, `seq`): the one path of a tool call, which
   * `POST /sessions/:id/call` and OpenEnv's `call_tool` step and MCP `tools/call` all take, so each gets the
   * same checks and errors. Throws the `ServerError` the route answers.
   */
  callTool(id: string, fields: Record<string, unknown>, client?: string): CallOutcome | Promise<CallOutcome>;
  /** For an upgrade to `/ws`: the client (its token, header or `?token=`) and the environment asked for, or the refusal. */
  admitWebSocket(target: string, authorization: string | undefined): { client: string; env: string | undefined } | Answer;
}

const sessionFields = new Set(["env", "split", "seed", "index", "config", "max_turns"]);

/**
 * `POST /sessions` from its parsed body: refuses fields it does not know, then opens the session for
 * `client` (its quota). Shared by the route and OpenEnv's reset, so both validate alike. A config naming
 * data files or models resolves them first, asynchronously (external-config.ts).
 */
export function createSession(protocol: Pick<Protocol, "store" | "resources">, body: Record<string, unknown>, client: string): Session | Promise<Session> {
  const { store } = protocol;
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
  // Config given as JSON text (dataset rows carry it so) meets the body's JSON checks, depth included.
  if (typeof address.config === "string") address.config = parseConfigText(address.config);
  checkModelOptions(env, address.config, protocol.resources);
  // The quota before any work starts: a refusal thrown after the work began left its promise unhandled (issue 36).
  store.checkQuota(client);
  const external = resolveExternalConfig(env, address.config, protocol.resources);
  if (!external) return prepareAndOpen(store, address, client);
  return external.then((config) => prepareAndOpen(store, { ...address, config }, client));
}

/** Opens the session once its task's slow work (if any) is done off the event loop. */
function prepareAndOpen(store: SessionStore, address: SessionAddress, client: string): Session | Promise<Session> {
  const preparing = store.prepare(address);
  if (!preparing) return openConversation(store, store.create(address, client));
  return preparing.then(() => openConversation(store, store.create(address, client)));
}

/** A path segment as a route parameter: percent-escapes decoded where they are valid. */
function parameter(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The first value of a query parameter (`+` as a space), or undefined. */
function queryValue(query: string, name: string): string | undefined {
  return query === "" ? undefined : (new URLSearchParams(query).get(name) ?? undefined);
}

/** Answers a handler's value as JSON, or its error. */
function settle(status: number, value: unknown): Answer | Promise<Answer> {
  if (value instanceof Promise) return value.then((ready) => jsonAnswer(status, JSON.stringify(ready)), failure);
  return jsonAnswer(status, JSON.stringify(value));
}

export function createProtocol(options: ProtocolOptions): Protocol {
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
    allowPartialRewards: resources.partialRewards,
    now: options.now,
  });
  const catalog = createEnvironmentCatalog(options.environments);
  const protocol = { store, resources };

  const unauthorized = errorAnswer(401, "UNAUTHORIZED", unauthorizedMessage);
  const tooLarge = errorAnswer(413, "BODY_TOO_LARGE", `request bodies are limited to ${settings.maxBodyBytes} bytes`);
  const closed = jsonAnswer(200, JSON.stringify({ closed: true }));
  const refusals = new Map<string, Answer>();
  const placeAnswer = (host: string | undefined, origin: string | undefined): Answer | undefined => {
    const refusal = access.checkPlace(host, origin);
    if (!refusal) return undefined;
    let answer = refusals.get(refusal.code);
    if (!answer) refusals.set(refusal.code, (answer = errorAnswer(refusal.status, refusal.code, refusal.message)));
    return answer;
  };

  /** A handler run for an identified client; anything it throws is answered as an error. */
  const guarded =
    (run: (client: string, body: string) => Answer | Promise<Answer>, queryToken?: string): Handler =>
    (authorization, body) => {
      const client = access.identify(authorization, queryToken);
      if (client === undefined) return unauthorized;
      try {
        return run(client, body);
      } catch (error) {
        return failure(error);
      }
    };

  const health: Handler = () => jsonAnswer(200, JSON.stringify({ status: "healthy", sessions: store.size, max_sessions: store.maxSessions }));
  const create = guarded((client, body) => {
    const session = createSession(protocol, parseObject(body), client);
    return session instanceof Promise
      ? session.then((opened) => jsonAnswer(201, JSON.stringify(describeSession(opened))), failure)
      : settle(201, describeSession(session));
  });
  const callTool = (id: string, fields: Record<string, unknown>, client?: string) => store.call(id, fields.name, fields.arguments, fields.seq, client);
  /** `POST /sessions/:id/call`: the hot path of training, one per tool call. */
  const call = (id: string): Handler =>
    guarded((client, body) => {
      const outcome = callTool(id, parseObject(body), client);
      // A call answered with I/O (a simulated user's reply) comes back later; every other one now.
      return outcome instanceof Promise ? outcome.then(outcomeAnswer, failure) : outcomeAnswer(outcome);
    });

  const route = (method: string, target: string): Handler => {
    const mark = target.indexOf("?");
    const path = mark < 0 ? target : target.slice(0, mark);
    const query = mark < 0 ? "" : target.slice(mark + 1);
    const verb = method === "HEAD" ? "GET" : method;
    if (path === "/health" && verb === "GET") return health;
    const parts = path.split("/");
    const [first, second, third] = [parts[1], parts[2], parts[3]];
    const id = second === undefined || second === "" ? undefined : parameter(second);
    if (parts[0] === "" && parts.length <= 4) {
      if (first === "envs" && verb === "GET" && parts.length === 2) return guarded(() => settle(200, { environments: catalog.list() }));
      if (first === "envs" && verb === "GET" && parts.length === 3 && id !== undefined)
        return guarded(() => {
          const entry = catalog.get(id);
          if (!entry) store.environment(id);
          return settle(200, entry);
        });
      if (first === "stats" && verb === "GET" && parts.length === 2)
        return guarded(() => settle(200, { open_sessions: store.size, max_sessions: store.maxSessions, ...store.counters }));
      if (first === "ws" && verb === "GET" && parts.length === 2)
        return guarded(
          () => errorAnswer(426, "UPGRADE_REQUIRED", "/ws speaks OpenEnv's WebSocket protocol; connect with a WebSocket client"),
          queryValue(query, "token"),
        );
      if (first === "sessions" && parts.length === 2 && verb === "POST") return create;
      if (first === "sessions" && id !== undefined && parts.length === 3) {
        if (verb === "GET")
          return guarded((client) => {
            const session = store.get(id, client);
            return settle(200, { ...describeSession(session), done: session.driver.episode.done, calls: session.calls });
          });
        if (verb === "DELETE")
          return guarded((client) => {
            if (!store.close(id, client)) store.get(id, client);
            return closed;
          });
      }
      if (first === "sessions" && id !== undefined && third === "call" && verb === "POST") return call(store.ownId(id));
      if (first === "sessions" && id !== undefined && third === "reward") {
        if (verb === "GET") return guarded((client) => settle(200, store.reward(id, queryValue(query, "ended_by"), client)));
        if (verb === "POST") return guarded((client, body) => settle(200, store.reward(id, parseObject(body).ended_by, client)));
      }
    }
    const unknown = errorAnswer(404, "ROUTE_UNKNOWN", `no route ${method.slice(0, 10)} ${path.slice(0, 100)}; see GET /envs and POST /sessions`);
    return guarded(() => unknown);
  };

  const refuseEarly = (method: string, target: string, authorization: string | undefined): Answer | undefined => {
    if (!access.needsToken) return undefined;
    const mark = target.indexOf("?");
    const path = mark < 0 ? target : target.slice(0, mark);
    if (path === "/health" && (method === "GET" || method === "HEAD")) return undefined;
    const queryToken = path === "/ws" && mark >= 0 ? queryValue(target.slice(mark + 1), "token") : undefined;
    return access.identify(authorization, queryToken) === undefined ? unauthorized : undefined;
  };

  return {
    store,
    catalog,
    options: settings,
    access,
    resources,
    checkPlace: placeAnswer,
    route,
    tooLarge,
    callTool,
    answer(request) {
      const { method, target, authorization } = request;
      const body = request.body ?? "";
      const refusal = placeAnswer(request.host, request.origin) ?? refuseEarly(method, target, authorization);
      if (refusal) return refusal;
      // Transports stop reading at the limit; a body handed in whole is held to it here.
      if (body.length * 3 > settings.maxBodyBytes && Buffer.byteLength(body) > settings.maxBodyBytes) return tooLarge;
      return route(method, target)(authorization, body);
    },
    refuseEarly,
    admitWebSocket(target, authorization) {
      const mark = target.indexOf("?");
      const query = mark < 0 ? "" : target.slice(mark + 1);
      const client = access.identify(authorization, queryValue(query, "token"));
      if (client === undefined) return unauthorized;
      return { client, env: queryValue(query, "env") };
    },
  };
}
