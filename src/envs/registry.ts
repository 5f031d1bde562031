import type { AnyEnvironment } from "../core/index.ts";
import { UsageError } from "../core/index.ts";
import { babyaiEnvironment } from "./babyai/index.ts";
import { mockEnvironment } from "./mock/index.ts";
import { searchPlanActEnvironment } from "./search_plan_act/index.ts";
import { searchPlanOodEnvironment } from "./search_plan_ood/index.ts";
import { musiqueEnvironment, wikiEnvironment } from "./multihop/index.ts";

/**
 * Every environment toolgym knows, by id. Add one line per environment folder.
 */
export const ENVIRONMENTS = {
  mock: mockEnvironment,
  search_plan_act: searchPlanActEnvironment,
  search_plan_ood: searchPlanOodEnvironment,
  babyai: babyaiEnvironment,
  musique: musiqueEnvironment,
  "2wiki": wikiEnvironment,
} satisfies Record<string, AnyEnvironment>;

/** Environments `toolgym eval` runs when called with no arguments. */
export const DEFAULT_EVAL_ENVIRONMENTS: string[] = ["search_plan_act", "search_plan_ood", "babyai"];

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
