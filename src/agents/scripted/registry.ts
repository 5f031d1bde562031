import { UsageError } from "../../core/index.ts";
import { babyaiPolicies } from "./babyai/index.ts";
import { mockPolicies } from "./mock.ts";
import { multihopPolicies } from "./multihop/index.ts";
import type { ScriptedPolicy } from "./policy.ts";
import { searchPlanPolicies } from "./search-plan-act/index.ts";

/** Scripted policies per environment id; the first genuine one is the default for `toolgym eval`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const SCRIPTED_POLICIES: Record<string, ScriptedPolicy<any>[]> = {
  mock: mockPolicies,
  search_plan_act: searchPlanPolicies,
  search_plan_ood: searchPlanPolicies,
  babyai: babyaiPolicies,
  musique: multihopPolicies,
  "2wiki": multihopPolicies,
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function getPolicies(envId: string): ScriptedPolicy<any>[] {
  const policies = SCRIPTED_POLICIES[envId];
  if (!policies) throw new UsageError({ code: "POLICIES_UNKNOWN", message: `no scripted policies for environment '${envId}'` });
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
