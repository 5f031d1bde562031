import { UsageError, type AuditSpec } from "../core/index.ts";
import { getEnvironment, listEnvironments } from "../envs/registry.ts";

/** The audit an environment's definition declares. */
export function getAuditSpec(envId: string): AuditSpec {
  const spec = getEnvironment(envId).audit;
  if (!spec) {
    const audited = listEnvironments()
      .filter((env) => env.audit)
      .map((env) => env.id);
    throw new UsageError({ code: "AUDIT_UNKNOWN", message: `no audit defined for '${envId}'; environments with an audit: ${audited.join(", ")}` });
  }
  return spec;
}
