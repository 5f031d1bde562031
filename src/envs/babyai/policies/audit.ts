import { standardAcceptance, type AuditSpec } from "../../_kit/acceptance.ts";

/**
 * BabyAI audit. The oracle must score like the reference bot (mean return ≈ 0.92 over the five tasks,
 * 100% success); pilots that ignore the observation must stay far below it. GoTo is satisfied by merely
 * facing the target, so wandering pilots succeed on some goto/pickup levels: the thresholds come from
 * measured pilot scores plus margin (about.md, "Audit").
 */
export const babyaiAudit: AuditSpec = {
  components: ["return", "success", "progression"],
  policies: ["oracle", "random_actions", "always_forward", "spin_in_place", "toggle_spam", "invalid_text"],
  acceptance: standardAcceptance({
    oracle: "oracle",
    oracleMin: 0.88,
    pilots: ["random_actions", "always_forward", "spin_in_place", "toggle_spam", "invalid_text"],
    pilotMax: 0.25,
    reference: "oracle",
  }),
  // The pilots ignore the observation under either protocol and either BALROG agent.
  configs: [{ protocol: "tools" }, { balrog_agent: "cot" }],
};
