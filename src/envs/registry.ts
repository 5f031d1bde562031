import type { AnyEnvironment } from "../core/index.ts";
import { UsageError } from "../core/index.ts";
import { mockEnvironment } from "./mock/index.ts";

/**
 * Every environment toolgym knows, by id. Add one line per environment folder.
 */
export const ENVIRONMENTS = {
  mock: mockEnvironment,
} satisfies Record<string, AnyEnvironment>;

/** Environments `toolgym eval` runs when called with no arguments. */
export const DEFAULT_EVAL_ENVIRONMENTS: string[] = [];

export function listEnvironments(): AnyEnvironment[] {
  return Object.values(ENVIRONMENTS as Record<string, AnyEnvironment>);
}

export function getEnvironment(id: string): AnyEnvironment {
  const env = (ENVIRONMENTS as Record<string, AnyEnvironment>)[id];
  if (!env) {
    throw new UsageError({ code: "ENV_UNKNOWN", message: `unknown environment '${id}'; available: ${Object.keys(ENVIRONMENTS).join(", ")}` });
  }
  return env;
}
