import { standardAcceptance, type AuditSpec } from "../../_kit/acceptance.ts";

/**
 * The audit of `musique` / `2wiki`: the oracle must reach F1 ≥ 0.95 and every pilot (answer dump,
 * empty answer, echo of the question, constant "yes") must stay at or below 0.25 with its confidence
 * interval below the oracle's.
 */
export function multihopAudit(): AuditSpec {
  return {
    components: ["f1", "em", "supporting_read"],
    policies: ["oracle", "answer_dump", "empty_answer", "echo_question", "guess_yes"],
    acceptance: standardAcceptance({
      oracle: "oracle",
      oracleMin: 0.95,
      pilots: ["answer_dump", "empty_answer", "echo_question", "guess_yes"],
      pilotMax: 0.25,
      reference: "oracle",
    }),
    // Every mode: the text modes read nothing by design, and their pilots trip the answer signatures.
    configs: [{ mode: "pool" }, { mode: "context" }, { mode: "closed_book" }],
  };
}
