import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { UsageError } from "../../core/index.ts";
import { ENVIRONMENTS } from "../../envs/registry.ts";
import { isLoopback } from "../../server/access.ts";
import { startServerCluster } from "../../server/cluster.ts";
import { DEFAULT_MAX_MODEL_TOKENS, MAX_MODEL_TOKENS_LIMIT, type ServerResources } from "../../server/external-config.ts";
import { startServer } from "../../server/start-server.ts";
import type { CommandContext } from "../io.ts";
import { collectText, parseInteger, parsePort, parseText, requireDirectory, requireHttpUrl, requireInputFile } from "../options.ts";

interface ServeOptions {
  host: string;
  port: number;
  tokenFile?: string;
  allowNoToken?: boolean;
  allowOrigin?: string[];
  allowHost?: string[];
  dataDir?: string[];
  allowPartialRewards?: boolean;
  model?: string[];
  maxSessions: number;
  maxSessionsPerClient?: number;
  maxConnections: number;
  idleSeconds: number;
  maxModelTokens: number;
  workers: number;
}

/** What every server process gets, checked together before anything listens. */
export interface ServeSettings {
  host: string;
  port: number;
  tokens: string[];
  allowedOrigins: string[];
  allowedHosts: string[];
  resources: ServerResources;
  maxSessions: number;
  maxSessionsPerClient?: number;
  maxConnections: number;
  idleSeconds: number;
}

/** Tokens from TOOLGYM_TOKEN (or the older TOOLGYM_SERVER_TOKEN) and `--token-file` (one a line): never from the command line, which `ps` shows. */
function readTokens(tokenFile: string | undefined): string[] {
  const tokens: string[] = [];
  const fromEnvironment = process.env.TOOLGYM_TOKEN ?? process.env.TOOLGYM_SERVER_TOKEN;
  if (fromEnvironment !== undefined && fromEnvironment.trim() !== "") tokens.push(fromEnvironment.trim());
  if (tokenFile !== undefined) {
    const lines = readFileSync(requireInputFile("--token-file", tokenFile), "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"));
    if (lines.length === 0) throw new UsageError({ code: "TOKEN_FILE_EMPTY", message: `--token-file '${tokenFile}' holds no token; write one token a line` });
    tokens.push(...lines);
  }
  const short = tokens.find((token) => token.length < 16);
  if (short !== undefined)
    throw new UsageError({ code: "TOKEN_WEAK", message: "a server token must be at least 16 characters; make one with: openssl rand -hex 24" });
  return tokens;
}

/** `--model NAME=URL#MODEL`: the endpoints sessions may pick by NAME (tau2's user simulator and judge). */
function readModels(entries: string[] = []): Record<string, string> {
  const models: Record<string, string> = {};
  for (const entry of entries) {
    const equals = entry.indexOf("=");
    const hash = entry.lastIndexOf("#");
    const name = entry.slice(0, Math.max(0, equals));
    if (equals < 1 || hash < equals || !/^[\w.-]+$/.test(name) || hash === entry.length - 1)
      throw new UsageError({ code: "MODEL_INVALID", message: `--model '${entry}' must be NAME=URL#MODEL, e.g. user=http://127.0.0.1:8000/v1#Qwen/Qwen3-0.6B` });
    for (const url of entry.slice(equals + 1, hash).split(",")) requireHttpUrl("--model", url);
    models[name] = entry.slice(equals + 1);
  }
  return models;
}

export function serveSettings(options: ServeOptions): ServeSettings {
  const tokens = readTokens(options.tokenFile);
  if (tokens.length === 0 && !isLoopback(options.host) && !options.allowNoToken)
    throw new UsageError({
      code: "TOKEN_REQUIRED",
      message: `serving on ${options.host} (beyond loopback) needs a token: set TOOLGYM_TOKEN or pass --token-file FILE (or --allow-no-token on a network you trust)`,
    });
  const dataDirectories = (options.dataDir ?? []).map((directory) => requireDirectory("--data-dir", directory));
  return {
    host: options.host,
    port: options.port,
    tokens,
    allowedOrigins: options.allowOrigin ?? [],
    allowedHosts: options.allowHost ?? [],
    resources: {
      dataDirectories,
      models: readModels(options.model),
      maxModelTokens: options.maxModelTokens,
      ...(options.allowPartialRewards ? { partialRewards: true } : {}),
    },
    maxSessions: options.maxSessions,
    ...(options.maxSessionsPerClient !== undefined ? { maxSessionsPerClient: options.maxSessionsPerClient } : {}),
    maxConnections: options.maxConnections,
    idleSeconds: options.idleSeconds,
  };
}

export function registerServe(program: Command, { io }: CommandContext): void {
  program
    .command("serve")
    .description("Serve every registered environment over HTTP (sessions) and OpenEnv's WebSocket protocol (/ws) for trainers such as TRL. See docs/server.md.")
    .option("--host <host>", "interface to listen on (loopback by default; beyond it a token is required)", parseText("--host"), "127.0.0.1")
    .option("--port <port>", "port (0 picks a free one)", parsePort("--port"), 8765)
    .option("--token-file <file>", "bearer tokens, one a line, each a client with its own session quota (also: TOOLGYM_TOKEN)", parseText("--token-file"))
    .option("--allow-no-token", "serve beyond loopback without a token (a trusted network only)")
    .option("--allow-origin <origin>", "let web pages of this origin call the server (repeatable; others get 403)", collectText("--allow-origin"))
    .option("--allow-host <name>", "accept this Host name besides the bound address (repeatable)", collectText("--allow-host"))
    .option("--data-dir <dir>", "a directory whose datasets session configs may name (repeatable; none by default)", collectText("--data-dir"))
    .option("--model <name=url#model>", "a model endpoint sessions may pick by name (tau2 user_model / judge_model; repeatable)", collectText("--model"))
    .option(
      "--allow-partial-rewards",
      "open sessions whose reward leaves part of the benchmark's basis unscored (tau2 tasks with NL assertions and no judge_model); refused by default",
    )
    .option("--max-sessions <n>", "most open sessions at once", parseInteger("--max-sessions", { min: 1 }), 1024)
    .option("--max-sessions-per-client <n>", "most open sessions per token (default: --max-sessions)", parseInteger("--max-sessions-per-client", { min: 1 }))
    .option("--max-connections <n>", "most open connections", parseInteger("--max-connections", { min: 1 }), 4096)
    .option("--idle-seconds <s>", "close sessions unused for this long", parseInteger("--idle-seconds", { min: 1 }), 600)
    .option(
      "--max-model-tokens <n>",
      "most tokens a session's config may ask of a --model per reply (*_max_tokens config keys: tau2's user_max_tokens)",
      parseInteger("--max-model-tokens", { min: 1, max: MAX_MODEL_TOKENS_LIMIT }),
      DEFAULT_MAX_MODEL_TOKENS,
    )
    .option(
      "--workers <n>",
      "worker processes sharing the port (sessions stay in the worker that created them; --max-sessions applies to each)",
      parseInteger("--workers", { min: 1, max: 256 }),
      1,
    )
    .action(async (options: ServeOptions) => {
      const settings = serveSettings(options);
      if (options.workers > 1) return serveWithWorkers(options.workers, settings, io);
      const server = await startServer({ environments: ENVIRONMENTS, ...settings });
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

async function serveWithWorkers(workers: number, settings: ServeSettings, io: CommandContext["io"]): Promise<void> {
  const server = await startServerCluster({
    workers,
    ...settings,
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
