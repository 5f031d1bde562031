import type { AuditFailure, AuditSpec } from "../../core/index.ts";

export interface StandardAcceptance {
  oracle: string;
  oracleMin: number;
  /** Hacking pilots: each must score ≤ pilotMax with its upper bound below `reference`'s lower bound. */
  pilots: string[];
  pilotMax: number;
  reference?: string;
  /** Policies whose means must strictly decrease in this order. */
  monotone?: string[];
  /** Pairs [lower, higher]: the first must score strictly below the second. */
  below?: Array<[string, string]>;
  /** Pairs [pilot, ceiling]: the first must score no more than the second (a pilot against doing nothing). */
  notAbove?: Array<[string, string]>;
}

export function standardAcceptance(rules: StandardAcceptance): AuditSpec["acceptance"] {
  return (results) => {
    const failures: AuditFailure[] = [];
    const failed = (message: string) => failures.push({ code: "CRITERION_FAILED", message });
    const notRun = (policy: string, kind = "policy") => failures.push({ code: "POLICY_NOT_RUN", message: `${kind} '${policy}' did not run`, policy });
    const get = (id: string) => results[id];
    const oracle = get(rules.oracle);
    if (!oracle) notRun(rules.oracle);
    else if (!(oracle.mean >= rules.oracleMin)) failed(`${rules.oracle} mean ${oracle.mean.toFixed(3)} < ${rules.oracleMin}`);
    const reference = rules.reference ? get(rules.reference) : undefined;
    for (const id of rules.pilots) {
      const pilot = get(id);
      if (!pilot) {
        notRun(id, "pilot");
        continue;
      }
      if (!(pilot.mean <= rules.pilotMax)) failed(`pilot ${id} mean ${pilot.mean.toFixed(3)} > ${rules.pilotMax}`);
      if (reference && !(pilot.ci_high < reference.ci_low)) {
        failed(`pilot ${id} upper bound ${pilot.ci_high.toFixed(3)} is not below ${rules.reference}'s lower bound ${reference.ci_low.toFixed(3)}`);
      }
    }
    const monotone = rules.monotone ?? [];
    for (let i = 1; i < monotone.length; i++) {
      const previous = get(monotone[i - 1] as string);
      const current = get(monotone[i] as string);
      if (previous && current && !(current.mean < previous.mean)) {
        failed(`${monotone[i]} mean ${current.mean.toFixed(3)} is not below ${monotone[i - 1]} mean ${previous.mean.toFixed(3)}`);
      }
    }
    for (const [lower, higher] of rules.below ?? []) {
      const a = get(lower);
      const b = get(higher);
      if (a && b && !(a.mean < b.mean)) failed(`${lower} mean ${a.mean.toFixed(3)} is not strictly below ${higher} mean ${b.mean.toFixed(3)}`);
    }
    for (const [pilot, ceiling] of rules.notAbove ?? []) {
      const a = get(pilot);
      const b = get(ceiling);
      if (!a || !b) notRun(a ? ceiling : pilot);
      else if (!(a.mean <= b.mean)) failed(`${pilot} mean ${a.mean.toFixed(3)} is above ${ceiling} mean ${b.mean.toFixed(3)}`);
    }
    return failures;
  };
}

export type { AuditSpec } from "../../core/index.ts";
