import { BusyError, ServerError, ToolgymError, parseConfig, type AnyEnvironment } from "../core/index.ts";
import { withoutFileText } from "./external-config.ts";
import type { SessionAddress } from "./session-types.ts";

/** A session's address checked and its config parsed: what `generate` takes, and the key of its shared task. */
export interface TaskAddress {
  split: string;
  seed: number;
  index: number;
  maxTurns: number | undefined;
  config: unknown;
  /** The address as one string (environment, split, seed, index, config): sessions on one key share their task. */
  key: string;
}

function badRequest(code: string, message: string, status = 400): ServerError {
  return new ServerError({ code, message, status });
}

function checkInteger(name: string, value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw badRequest("INVALID_FIELD", `'${name}' must be a non-negative integer, got ${JSON.stringify(value)?.slice(0, 40)}`);
  }
  return value;
}

/** Checks a session's split, seed, index, max_turns and config (400 or 404 for what is wrong). */
export function taskAddress(env: AnyEnvironment, address: SessionAddress): TaskAddress {
  const split = address.split ?? env.defaultSplit;
  if (typeof split !== "string" || !env.splits.includes(split)) {
    throw badRequest("SPLIT_UNKNOWN", `${env.id}: unknown split ${JSON.stringify(split)?.slice(0, 40)}; available: ${env.splits.join(", ")}`);
  }
  const seed = checkInteger("seed", address.seed, 0);
  const index = checkInteger("index", address.index, 0);
  const maxTurns = address.max_turns === undefined || address.max_turns === null ? undefined : checkInteger("max_turns", address.max_turns, 0);
  if (maxTurns === 0) throw badRequest("INVALID_FIELD", "'max_turns' must be at least 1 (or left out for the environment's own limit)");
  let config: unknown;
  try {
    config = parseConfig(env.id, env.configSchema, address.config ?? {});
  } catch (error) {
    throw badRequest("CONFIG_INVALID", ToolgymError.isInstance(error) ? error.message : String(error));
  }
  return { split, seed, index, maxTurns, config, key: `${env.id}\u0000${split}\u0000${seed}\u0000${index}\u0000${JSON.stringify(config)}` };
}

/** The 422 of a task that could not be built, in the environment's words (never a data file's text). */
export function taskFailed(env: AnyEnvironment, address: TaskAddress, error: unknown): ServerError {
  const message =
    withoutFileText(env.id, error) ?? `${env.id}: could not build task ${address.split}/${address.seed}/${address.index}: ${(error as Error)?.message}`;
  return badRequest("TASK_FAILED", message, 422);
}

/**
 * The environment's `prepareTask` for a session's address (its slow work, off the event loop), as the server
 * answers its failures: 429 when too many such jobs wait, else 422 TASK_FAILED. Undefined when nothing is slow.
 */
export function prepareTask(env: AnyEnvironment, address: TaskAddress): Promise<void> | undefined {
  if (!env.prepareTask) return undefined;
  const fail = (error: unknown): never => {
    if (error instanceof BusyError) throw badRequest("SERVER_BUSY", error.message, 429);
    throw taskFailed(env, address, error);
  };
  try {
    return env.prepareTask({ split: address.split, seed: address.seed, index: address.index, config: address.config })?.catch(fail);
  } catch (error) {
    return fail(error);
  }
}
