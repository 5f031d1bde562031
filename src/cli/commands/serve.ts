import type { Command } from "commander";
import { ENVIRONMENTS } from "../../envs/registry.ts";
import { startServerCluster } from "../../server/cluster.ts";
import { startServer } from "../../server/start-server.ts";
import type { CommandContext } from "../io.ts";
import { parseInteger, parsePort, parseText } from "../options.ts";

interface ServeOptions {
  host: string;
  port: number;
  token?: string;
  maxSessions: number;
  idleSeconds: number;
  workers: number;
}

export function registerServe(program: Command, { io }: CommandContext): void {
  program
    .command("serve")
    .description("Serve every registered environment over HTTP (sessions) and OpenEnv's WebSocket protocol (/ws) for trainers such as TRL.")
    .option("--host <host>", "interface to listen on (loopback by default)", parseText("--host"), "127.0.0.1")
    .option("--port <port>", "port (0 picks a free one)", parsePort("--port"), 8765)
    .option("--token <token>", "require 'Authorization: Bearer <token>' (default: TOOLGYM_SERVER_TOKEN if set)", parseText("--token"))
    .option("--max-sessions <n>", "most open sessions at once", parseInteger("--max-sessions", { min: 1 }), 1024)
    .option("--idle-seconds <s>", "close sessions unused for this long", parseInteger("--idle-seconds", { min: 1 }), 600)
    .option(
      "--workers <n>",
      "worker processes sharing the port (sessions stay in the worker that created them; --max-sessions applies to each)",
      parseInteger("--workers", { min: 1, max: 256 }),
      1,
    )
    .action(async (options: ServeOptions) => {
      const token = options.token ?? process.env.TOOLGYM_SERVER_TOKEN;
      if (options.workers > 1) return serveWithWorkers(options, token, io);
      const server = await startServer({
        environments: ENVIRONMENTS,
        host: options.host,
        port: options.port,
        token,
        maxSessions: options.maxSessions,
        idleSeconds: options.idleSeconds,
      });
      io.stdout.write(
        `toolgym serve: listening on ${server.url} (environments: ${Object.keys(ENVIRONMENTS).join(", ")}; OpenEnv WebSocket at ${server.url.replace("http", "ws")}/ws)\n`,
      );
      // Runs until Ctrl-C / SIGTERM (through the CLI's interrupt signal), then closes sessions and sockets.
      const signal = io.interrupts?.();
      if (!signal) return void (await server.close());
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      await server.close();
      io.stderr.write("toolgym serve: stopped\n");
    });
}

async function serveWithWorkers(options: ServeOptions, token: string | undefined, io: CommandContext["io"]): Promise<void> {
  const server = await startServerCluster({
    workers: options.workers,
    host: options.host,
    port: options.port,
    token,
    maxSessions: options.maxSessions,
    idleSeconds: options.idleSeconds,
    onWorkerRestart: (index, code, signal) =>
      io.stderr.write(`toolgym serve: worker ${index} stopped (${signal ?? `exit ${code}`}); started a new one, its sessions are lost\n`),
  });
  io.stdout.write(
    `toolgym serve: listening on ${server.url} with ${server.workers} workers (environments: ${Object.keys(ENVIRONMENTS).join(", ")}; OpenEnv WebSocket at ${server.url.replace("http", "ws")}/ws)\n`,
  );
  const signal = io.interrupts?.();
  if (!signal) return void (await server.close());
  await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  await server.close();
  io.stderr.write("toolgym serve: stopped\n");
}
