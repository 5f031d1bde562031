import { UsageError } from "../core/index.ts";
import { standardAcceptance, type AuditSpec } from "./audit-spec.ts";
import { multihopAudit } from "../agents/scripted/multihop/audit.ts";
import { babyaiAudit } from "../agents/scripted/babyai/audit.ts";
import { searchPlanAudit } from "../agents/scripted/search-plan-act/audit.ts";

/** The audit of each environment; add one entry per environment. */
export const AUDITS: Record<string, AuditSpec> = {
  babyai: babyaiAudit,
  musique: multihopAudit("musique"),
  "2wiki": multihopAudit("2wiki"),
  search_plan_act: searchPlanAudit("search_plan_act"),
  search_plan_ood: searchPlanAudit("search_plan_ood"),
  mock: {
    env: "mock",
    components: ["outcome", "stop"],
    policies: ["oracle", "reckless_guess"],
    acceptance: standardAcceptance({ oracle: "oracle", oracleMin: 0.95, pilots: ["reckless_guess"], pilotMax: 0.25 }),
  },
};

export function getAuditSpec(envId: string): AuditSpec {
  const spec = AUDITS[envId];
  if (!spec) throw new UsageError({ code: "AUDIT_UNKNOWN", message: `no audit defined for '${envId}'; available: ${Object.keys(AUDITS).join(", ")}` });
  return spec;
}
