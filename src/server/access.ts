import { timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";

/**
 * Who may talk to the server, checked the same way by every transport (the socket reader, node:http, the
 * WebSocket upgrade): the `Host` a request names (a web page that rebinds its own DNS name to 127.0.0.1
 * still sends its own name), its `Origin` (a browser sends one on every cross-site request, and a page may
 * only drive the server from an origin the operator allowed), and the bearer token.
 */
export interface AccessOptions {
  /** The address the server binds. */
  host: string;
  /** Accepted bearer tokens; empty: no token needed. Each token is one client for the session quota. */
  tokens: readonly string[];
  /** Origins allowed to call (exact `scheme://host[:port]`); requests with any other `Origin` get 403. */
  allowedOrigins?: readonly string[];
  /** Host names accepted besides the bound address (and localhost names on loopback). */
  allowedHosts?: readonly string[];
}

export interface Refusal {
  status: 401 | 403;
  code: string;
  message: string;
}

export interface Access {
  /** Null when a request's `Host` and `Origin` are acceptable, else the 403 to answer. */
  checkPlace(host: string | undefined, origin: string | undefined): Refusal | null;
  /** The client a request's credentials name (`"anonymous"` without tokens), or undefined for a wrong or missing token. */
  identify(authorization: string | undefined | null, queryToken?: string | null): string | undefined;
  readonly needsToken: boolean;
}

export const unauthorizedMessage =
  "missing or wrong bearer token; send 'Authorization: Bearer <token>' with the token 'toolgym serve' reads from TOOLGYM_TOKEN or --token-file";

export const unauthorized: Refusal = { status: 401, code: "UNAUTHORIZED", message: unauthorizedMessage };

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."));
}

export function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "";
}

/** The host name of a `Host` header value (`name[:port]`, `[v6][:port]`), lower-cased. */
export function hostName(value: string): string {
  const text = value.trim().toLowerCase();
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    return close < 0 ? text : text.slice(1, close);
  }
  const colon = text.indexOf(":");
  return colon < 0 ? text : text.slice(0, colon);
}

function sameBytes(given: string, wanted: Buffer): boolean {
  const bytes = Buffer.from(given);
  return bytes.length === wanted.length && timingSafeEqual(bytes, wanted);
}

export function createAccess(options: AccessOptions): Access {
  const wanted = options.tokens.map((token) => Buffer.from(token));
  const origins = new Set(options.allowedOrigins ?? []);
  // A wildcard bind answers on every address the machine has: any Host is its own name (a token guards it).
  const anyHost = isWildcard(options.host) && (options.allowedHosts ?? []).length === 0;
  const hosts = new Set([...(options.allowedHosts ?? []).map((name) => name.toLowerCase()), options.host.toLowerCase()]);
  if (isLoopback(options.host)) for (const name of LOOPBACK_NAMES) hosts.add(name);
  const forbiddenHost: Refusal = {
    status: 403,
    code: "HOST_FORBIDDEN",
    message: "the Host header names another server; connect to the address 'toolgym serve' listens on, or start it with --allow-host NAME",
  };
  const forbiddenOrigin: Refusal = {
    status: 403,
    code: "ORIGIN_FORBIDDEN",
    message: "requests from web pages are refused; start 'toolgym serve' with --allow-origin ORIGIN to let a page call it",
  };
  return {
    needsToken: wanted.length > 0,
    checkPlace(host, origin) {
      if (host !== undefined && !anyHost && !hosts.has(hostName(host))) return forbiddenHost;
      if (origin !== undefined && !origins.has(origin)) return forbiddenOrigin;
      return null;
    },
    identify(authorization, queryToken) {
      if (wanted.length === 0) return "anonymous";
      const given = authorization?.startsWith("Bearer ") ? authorization.slice(7) : (queryToken ?? undefined);
      if (given === undefined) return undefined;
      for (let index = 0; index < wanted.length; index++) if (sameBytes(given, wanted[index] as Buffer)) return `token-${index + 1}`;
      return undefined;
    },
  };
}
