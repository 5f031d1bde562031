import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import { createServerApp, type ServerAppOptions } from "../../src/server/app.ts";
import { startServer } from "../../src/server/start-server.ts";

/**
 * The same server options served twice: by `startServer` (the socket reader's hand-written paths in
 * front of the app) and by the Hono app alone, so parity tests can send both the same requests.
 */
export interface ServerPair {
  fastPort: number;
  simplePort: number;
  close(): Promise<void>;
}

export async function startServerPair(options: ServerAppOptions): Promise<ServerPair> {
  const fast = await startServer({ ...options, port: 0 });
  const app = createServerApp(options);
  const simple = await new Promise<ServerType>((resolve) => {
    const server = serve({ fetch: app.app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(server));
  });
  return {
    fastPort: fast.port,
    simplePort: (simple.address() as AddressInfo).port,
    close: async () => {
      await fast.close();
      await new Promise((resolve) => simple.close(resolve));
    },
  };
}
