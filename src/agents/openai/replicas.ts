import { UsageError } from "../../core/index.ts";
import { createOpenAIClientTransport } from "./openai-client-transport.ts";
import { createFetchTransport, createPoolTransport, type ChatTransport } from "./transport.ts";

export interface Replica {
  readonly baseUrl: string;
  readonly transport: ChatTransport;
  outstanding: number;
  consecutiveFailures: number;
  /** Epoch ms until which the replica is out of rotation (0: healthy). */
  downUntil: number;
  requests: number;
  failures: number;
}

export interface ReplicaPoolOptions {
  baseUrls: string[];
  /** Defaults to OPENAI_API_KEY, else "EMPTY" (local servers ignore it). Held in memory only. */
  apiKey?: string;
  /** Per-request timeout in ms (default DEFAULT_TIMEOUT_MS). */
  timeoutMs?: number;
  /** The largest reply body accepted, in bytes (default DEFAULT_MAX_REPLY_BYTES). */
  maxReplyBytes?: number;
  /** First time-out of a failing replica in ms (doubles per consecutive failure, capped at 30 s). */
  cooldownMs?: number;
  /** Custom fetch (tests, proxies); default: an undici keep-alive connection pool per replica. */
  fetch?: typeof fetch;
  /** HTTP client: `undici` (default, a pooled raw transport) or `openai` (the official npm client). */
  client?: "undici" | "openai";
  now?: () => number;
}

/**
 * The default per-request time-out: 180 s for the response headers (a non-streamed completion arrives whole),
 * long enough for a long generation on a slow server; with the agent's default retries a hung server fails
 * its episode within about 10 minutes instead of the 70 that 600 s × 7 attempts took.
 */
export const DEFAULT_TIMEOUT_MS = 180_000;

/** A base URL with credentials and query string removed: safe to write to files and logs. */
export function redactBaseUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    url.username = "";
    url.password = "";
    url.search = "";
    url.hash = "";
    return url.toString().replace(/\/$/, "");
  } catch {
    return "<invalid url>";
  }
}

/**
 * Replicas of one model behind several base URLs. `acquire` picks the healthy replica with the fewest
 * outstanding requests; a replica that fails is taken out of rotation for a growing cool-down and then
 * tried again. When every replica is cooling down, the one that comes back first is used.
 */
export class ReplicaPool {
  readonly replicas: Replica[];
  private readonly cooldownMs: number;
  private readonly now: () => number;

  constructor(options: ReplicaPoolOptions) {
    if (options.baseUrls.length === 0)
      throw new UsageError({
        code: "BASE_URL_MISSING",
        message: "no --base-url given; pass the server's OpenAI-compatible URL, e.g. http://127.0.0.1:8000/v1",
      });
    const apiKey = options.apiKey ?? process.env.OPENAI_API_KEY ?? "EMPTY";
    this.cooldownMs = options.cooldownMs ?? 1000;
    this.now = options.now ?? Date.now;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const transportOptions = { apiKey, timeoutMs, ...(options.maxReplyBytes !== undefined ? { maxReplyBytes: options.maxReplyBytes } : {}) };
    this.replicas = options.baseUrls.map((baseUrl) => {
      try {
        new URL(baseUrl);
      } catch {
        throw new UsageError({ code: "BASE_URL_INVALID", message: `--base-url '${redactBaseUrl(baseUrl)}' is not a URL; use e.g. http://127.0.0.1:8000/v1` });
      }
      const transport = options.fetch
        ? createFetchTransport(baseUrl, options.fetch, transportOptions)
        : options.client === "openai"
          ? createOpenAIClientTransport(baseUrl, transportOptions)
          : createPoolTransport(baseUrl, transportOptions);
      return { baseUrl, transport, outstanding: 0, consecutiveFailures: 0, downUntil: 0, requests: 0, failures: 0 };
    });
  }

  acquire(): Replica {
    const now = this.now();
    let best: Replica | undefined;
    for (const replica of this.replicas) {
      if (replica.downUntil > now) continue;
      if (!best || replica.outstanding < best.outstanding) best = replica;
    }
    if (!best) {
      for (const replica of this.replicas) if (!best || replica.downUntil < best.downUntil) best = replica;
    }
    const chosen = best as Replica;
    chosen.outstanding++;
    chosen.requests++;
    return chosen;
  }

  release(replica: Replica, outcome: "ok" | "failed"): void {
    replica.outstanding--;
    if (outcome === "ok") {
      replica.consecutiveFailures = 0;
      replica.downUntil = 0;
      return;
    }
    replica.failures++;
    replica.consecutiveFailures++;
    // A single replica is never taken out: the caller's backoff already paces the retries.
    if (this.replicas.length > 1) replica.downUntil = this.now() + Math.min(30_000, this.cooldownMs * 2 ** (replica.consecutiveFailures - 1));
  }

  /** Closes the replicas' idle connections (in-flight requests finish first). */
  async close(): Promise<void> {
    await Promise.all(this.replicas.map((replica) => replica.transport.close()));
  }

  stats(): Array<{ baseUrl: string; requests: number; failures: number }> {
    return this.replicas.map((replica) => ({ baseUrl: redactBaseUrl(replica.baseUrl), requests: replica.requests, failures: replica.failures }));
  }
}
