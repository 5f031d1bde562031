import { realpathSync } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import { isAbsolute, join, resolve, sep } from "node:path";
import { DataError, ServerError, ToolgymError, parseConfig, type AnyEnvironment } from "../core/index.ts";

/**
 * What a session config may reach outside the server process, fixed by its operator when the server starts:
 * data directories (`--data-dir`) and model endpoints by name (`--model NAME=URL#MODEL`). A client names a
 * dataset inside a data directory, or a model by its name, and never a path or a URL of its own.
 */
/** `--max-model-tokens` when not given: what a tau2 user or judge reply needs, with room to spare. */
export const DEFAULT_MAX_MODEL_TOKENS = 8192;
/** The largest `--max-model-tokens` an operator may set (no served model's context is longer). */
export const MAX_MODEL_TOKENS_LIMIT = 1_048_576;

export interface ServerResources {
  /** Data directories as given; resolved (after symlinks) when the server starts. */
  dataDirectories?: readonly string[];
  /** Model endpoints by the name clients use: `URL#MODEL` (several URLs comma-separated). */
  models?: Readonly<Record<string, string>>;
  /** Largest data file a session may load, in bytes (default 1 GiB). */
  maxDataFileBytes?: number;
  /** Most tokens a client may ask of the operator's models per reply (`*_max_tokens` config keys; `--max-model-tokens`, default 8192). */
  maxModelTokens?: number;
  /** The operator lets sessions train on a partial reward (`--allow-partial-rewards`: tau2's NL assertions without a judge). */
  partialRewards?: boolean;
}

export interface ResolvedResources {
  roots: string[];
  models: Record<string, string>;
  maxDataFileBytes: number;
  maxModelTokens: number;
  partialRewards: boolean;
}

function refuse(code: string, message: string, status = 400): ServerError {
  return new ServerError({ code, message, status });
}

/** Resolves the data directories once (a missing one is the operator's mistake, reported at start). */
export function resolveResources(resources: ServerResources = {}): ResolvedResources {
  const roots = (resources.dataDirectories ?? []).map((directory) => {
    try {
      return realpathSync(resolve(directory));
    } catch (error) {
      throw refuse(
        "DATA_DIR_MISSING",
        `--data-dir '${directory}' cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"}); give an existing directory`,
      );
    }
  });
  const models: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, address] of Object.entries(resources.models ?? {})) models[name] = address;
  return {
    roots,
    models,
    maxDataFileBytes: resources.maxDataFileBytes ?? 1024 ** 3,
    maxModelTokens: resources.maxModelTokens ?? DEFAULT_MAX_MODEL_TOKENS,
    partialRewards: resources.partialRewards === true,
  };
}

const within = (root: string, path: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

const outside = (key: string) =>
  refuse("DATA_OUTSIDE", `config '${key}' names a path outside the server's data directories; name a dataset relative to a --data-dir of 'toolgym serve'`, 403);

/**
 * The real path of a client-named `file` or `directory` inside a root: checked as written (without touching
 * the disk, so nothing outside reveals whether it exists), then again after symlinks, then its kind and size.
 */
async function resolvePath(key: string, value: string, kind: "file" | "directory", resources: ResolvedResources): Promise<string> {
  if (resources.roots.length === 0)
    throw refuse(
      "DATA_NOT_SERVED",
      `config '${key}' names a data location, but this server serves no data files; start 'toolgym serve' with --data-dir DIR`,
      403,
    );
  if (value.includes("\u0000")) throw outside(key);
  const candidates = isAbsolute(value) ? [resolve(value)] : resources.roots.map((root) => join(root, value));
  const inside = candidates.filter((candidate) => resources.roots.some((root) => within(root, candidate)));
  if (inside.length === 0) throw outside(key);
  for (const candidate of inside) {
    let real: string;
    try {
      real = await realpath(candidate);
    } catch {
      continue;
    }
    if (!resources.roots.some((root) => within(root, real))) throw outside(key);
    await checkKind(key, real, kind, resources.maxDataFileBytes);
    return real;
  }
  throw refuse("DATA_MISSING", `config '${key}': no such ${kind} in the server's data directories`, 404);
}

async function checkKind(key: string, real: string, kind: "file" | "directory", maxBytes: number): Promise<void> {
  const info = await stat(real);
  if (kind === "directory") {
    if (!info.isDirectory()) throw refuse("DATA_NOT_DIRECTORY", `config '${key}' must name a directory inside the server's data directories`);
    return;
  }
  if (!info.isFile()) throw refuse("DATA_NOT_FILE", `config '${key}' must name a regular file inside the server's data directories`);
  if (info.size > maxBytes) throw refuse("DATA_TOO_LARGE", `config '${key}' names a file over the server's limit of ${maxBytes} bytes`, 413);
}

/** The files `generate` would read for a config: each, when it exists, must lie inside a root and be a regular file within the size limit. */
async function checkDataFiles(env: AnyEnvironment, config: unknown, resources: ResolvedResources): Promise<void> {
  for (const file of env.dataFiles?.(config) ?? []) {
    let real: string;
    try {
      real = await realpath(file);
    } catch {
      continue; // missing: the environment reports it when it reads
    }
    if (!resources.roots.some((root) => within(root, real))) throw outside("data_dir");
    await checkKind("data_dir", real, "file", resources.maxDataFileBytes);
  }
}

/** An environment error about a data file, retold without its text: messages may quote the file's lines. */
export function withoutFileText(envId: string, error: unknown): string | undefined {
  if (!(error instanceof DataError)) return undefined;
  return `${envId}: the dataset could not be loaded (${error.code}${error.line ? ` at line ${error.line}` : ""}); check the file on the server`;
}

/**
 * The session config with every external value replaced by what the operator fixed (real paths, model
 * addresses), after the data files it names are checked and loaded without blocking. Configs naming nothing
 * external come back unchanged without awaiting anything (`undefined`).
 */
export function resolveExternalConfig(env: AnyEnvironment, config: unknown, resources: ResolvedResources): Promise<Record<string, unknown>> | undefined {
  const external = env.externalConfig;
  if (!external || config === undefined || config === null) return undefined;
  let object = config;
  if (typeof object === "string") {
    try {
      object = JSON.parse(object);
    } catch {
      return undefined; // parseConfig reports it
    }
  }
  if (typeof object !== "object" || object === null || Array.isArray(object)) return undefined;
  const given = object as Record<string, unknown>;
  const named = Object.keys(external).filter((key) => Object.hasOwn(given, key) && given[key] !== null && given[key] !== undefined);
  if (named.length === 0) return undefined;
  return (async () => {
    const rewritten: Record<string, unknown> = { ...given };
    for (const key of named) {
      const value = given[key];
      if (typeof value !== "string") continue; // the config schema refuses it
      const kind = external[key] as "file" | "directory" | "model";
      if (kind === "model") {
        if (!Object.hasOwn(resources.models, value)) {
          const names = Object.keys(resources.models);
          throw refuse(
            "MODEL_UNKNOWN",
            `config '${key}' names a model by its server name; ${names.length > 0 ? `this server has: ${names.join(", ")}` : "this server has none (start 'toolgym serve' with --model NAME=URL#MODEL)"}`,
          );
        }
        rewritten[key] = resources.models[value];
      } else rewritten[key] = await resolvePath(key, value, kind, resources);
    }
    let parsed: unknown;
    try {
      parsed = parseConfig(env.id, env.configSchema, rewritten);
    } catch (error) {
      throw refuse("CONFIG_INVALID", ToolgymError.isInstance(error) ? error.message : String(error));
    }
    await checkDataFiles(env, parsed, resources);
    try {
      await env.prepare?.(parsed);
    } catch (error) {
      throw refuse("TASK_FAILED", withoutFileText(env.id, error) ?? `${env.id}: the dataset could not be loaded`, 422);
    }
    return rewritten;
  })();
}

/**
 * What a client may put in `chat_template_kwargs` for the operator's models: switches of the common chat
 * templates, never the template itself (`chat_template`) nor anything else a server reads from there.
 */
export const CHAT_TEMPLATE_SWITCHES: Readonly<Record<string, (value: unknown) => boolean>> = {
  enable_thinking: (value) => typeof value === "boolean",
  thinking: (value) => typeof value === "boolean",
  reasoning_effort: (value) => value === "low" || value === "medium" || value === "high",
};

/**
 * Refuses config values an environment would send to the operator's models as they are (issue 36): a
 * `*_max_tokens` past the server's bound, and `*_chat_template_kwargs` beyond CHAT_TEMPLATE_SWITCHES. Only
 * for environments whose config names a model; checked on the client's config before anything starts.
 */
export function checkModelOptions(env: AnyEnvironment, config: unknown, resources: ResolvedResources): void {
  if (!env.externalConfig || !Object.values(env.externalConfig).includes("model")) return;
  if (typeof config !== "object" || config === null || Array.isArray(config)) return;
  for (const [key, value] of Object.entries(config as Record<string, unknown>)) {
    if (value === null || value === undefined) continue;
    if (key.endsWith("_max_tokens") && typeof value === "number" && value > resources.maxModelTokens)
      throw refuse(
        "MODEL_OPTION_REFUSED",
        `config '${key}' is at most ${resources.maxModelTokens} on this server (the operator's models answer every session)`,
      );
    if (!key.endsWith("_chat_template_kwargs") || typeof value !== "object") continue;
    for (const [name, setting] of Object.entries(value as Record<string, unknown>)) {
      const allowed = Object.hasOwn(CHAT_TEMPLATE_SWITCHES, name) ? CHAT_TEMPLATE_SWITCHES[name] : undefined;
      if (!allowed?.(setting))
        throw refuse(
          "MODEL_OPTION_REFUSED",
          `config '${key}' may set only ${Object.keys(CHAT_TEMPLATE_SWITCHES).join(", ")} (booleans; reasoning_effort low, medium or high), not '${name.slice(0, 40)}'`,
        );
    }
  }
}

/**
 * An error text from a model endpoint without the endpoint's address: a client names a model by the name
 * the operator gave it and must not learn where it runs (issue 36: OPENING_FAILED showed host:port).
 */
export function withoutAddresses(text: string): string {
  return text
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]*/gi, "<model server>")
    .replace(/\[[0-9a-f:.]+\](?::\d+)?/gi, "<model server>")
    .replace(/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?/g, "<model server>")
    .replace(/\blocalhost(?::\d+)?/gi, "<model server>");
}
