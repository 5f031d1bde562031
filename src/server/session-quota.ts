import { ServerError } from "../core/index.ts";

/**
 * How many sessions the server and each client (a token; all clients without one count as one) may hold
 * open: loopback clients share one address, so a quota per address would protect nothing.
 */
export class SessionQuota {
  /** Open sessions by client. */
  private readonly byClient = new Map<string, number>();

  constructor(
    private readonly maxSessions: number,
    private readonly maxPerClient: number | undefined,
  ) {}

  /** Throws the 429 a new session of `client` gets while `open` sessions are open in all. */
  check(client: string, open: number): void {
    const perClient = this.maxPerClient;
    if (perClient !== undefined && (this.byClient.get(client) ?? 0) >= perClient) {
      throw new ServerError({
        code: "CLIENT_SESSIONS",
        status: 429,
        message: `this client already holds ${perClient} sessions (--max-sessions-per-client ${perClient}); close finished sessions, or give each trainer its own token`,
      });
    }
    if (open >= this.maxSessions) {
      throw new ServerError({
        code: "MAX_SESSIONS",
        status: 429,
        message: `the server already holds ${open} sessions (--max-sessions ${this.maxSessions}); close finished sessions or restart 'toolgym serve' with a larger --max-sessions`,
      });
    }
  }

  add(client: string): void {
    this.byClient.set(client, (this.byClient.get(client) ?? 0) + 1);
  }

  remove(client: string): void {
    const held = (this.byClient.get(client) ?? 1) - 1;
    if (held === 0) this.byClient.delete(client);
    else this.byClient.set(client, held);
  }

  clear(): void {
    this.byClient.clear();
  }
}
