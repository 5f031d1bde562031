import type { AnyEnvironment, ScriptedPolicy } from "../core/index.ts";
import { UsageError } from "../core/index.ts";
import { babyaiEnvironment } from "./babyai/index.ts";
import { mockEnvironment } from "./mock/index.ts";
import { searchPlanActEnvironment } from "./search_plan_act/index.ts";
import { searchPlanOodEnvironment } from "./search_plan_ood/index.ts";
import { musiqueEnvironment, wikiEnvironment } from "./multihop/index.ts";
import { tau2MockEnvironment } from "./tau2_mock/index.ts";
import { tau2RetailEnvironment } from "./tau2_retail/index.ts";
import { tau2TelecomEnvironment } from "./tau2_telecom/index.ts";

/**
 * Every environment toolgym knows, by id: the one place an environment is registered. Everything else
 * (agents, audits, suites, reports, the server, the CLI) reads what it needs from these definitions.
 */
export const ENVIRONMENTS = {
  mock: mockEnvironment,
  search_plan_act: searchPlanActEnvironment,
  search_plan_ood: searchPlanOodEnvironment,
  babyai: babyaiEnvironment,
  musique: musiqueEnvironment,
  "2wiki": wikiEnvironment,
  tau2_retail: tau2RetailEnvironment,
  tau2_mock: tau2MockEnvironment,
  tau2_telecom: tau2TelecomEnvironment,
} satisfies Record<string, AnyEnvironment>;

export type EnvironmentId = keyof typeof ENVIRONMENTS;

/** Environments `toolgym eval` runs when called with no arguments: the seed's own environments. */
export const DEFAULT_EVAL_ENVIRONMENTS: readonly EnvironmentId[] = ["search_plan_act", "search_plan_ood", "babyai"];

export function isEnvironmentId(id: string): id is EnvironmentId {
  return Object.hasOwn(ENVIRONMENTS, id);
}

export function listEnvironments(): AnyEnvironment[] {
  return Object.values(ENVIRONMENTS as Record<string, AnyEnvironment>);
}

export function getEnvironment(id: string): AnyEnvironment {
  if (!isEnvironmentId(id)) {
    throw new UsageError({ code: "ENV_UNKNOWN", message: `unknown environment '${id}'; available: ${Object.keys(ENVIRONMENTS).join(", ")}` });
  }
  return ENVIRONMENTS[id] as AnyEnvironment;
}

/** The environments of a family (e.g. every τ²-bench domain), for commands that take a family name. */
export function environmentsOfFamily(family: string): AnyEnvironment[] {
  return listEnvironments().filter((env) => env.family === family);
}

/** Display title of an environment: its definition's, else its id. */
export function environmentTitle(id: string): string {
  return isEnvironmentId(id) ? ((ENVIRONMENTS[id] as AnyEnvironment).title ?? id) : id;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function getPolicies(envId: string): ScriptedPolicy<any>[] {
  const policies = getEnvironment(envId).policies ?? [];
  if (policies.length === 0) throw new UsageError({ code: "POLICIES_UNKNOWN", message: `environment '${envId}' has no scripted policies; use --model` });
  return policies;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function getPolicy(envId: string, policyId: string): ScriptedPolicy<any> {
  const policy = getPolicies(envId).find((candidate) => candidate.id === policyId);
  if (!policy) {
    throw new UsageError({
      code: "POLICY_UNKNOWN",
      message: `unknown agent '${policyId}' for ${envId}; available: ${getPolicies(envId)
        .map((candidate) => candidate.id)
        .join(", ")}`,
    });
  }
  return policy;
}
