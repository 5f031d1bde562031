import type { JsonValue, RewardBreakdown } from "../../core/index.ts";
import { PythonError } from "../../python-semantics/index.ts";
import type { DomainBundle } from "./domains.ts";
import { evaluateOrError, type NlJudge, type TerminationReason } from "./evaluate.ts";
import { tau2MessagesJson } from "./record.ts";
import { rewardBasis, type RewardType, type Tau2Message, type Tau2Task } from "./types.ts";

const COMPONENTS: RewardType[] = ["DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION"];

/**
 * tau2's reward: the product over the task's basis. NL_ASSERTION goes to the judge when the task has
 * assertions; without a judge it stays unscored (null), the episode is `partial` and never a pass.
 * The breakdown's diagnostics carry tau2's record of the simulation: its termination reason, its
 * RewardInfo and its whole message list in the shape of tau2's results file.
 */
export async function scoreEpisode(
  options: { bundle: DomainBundle; task: Tau2Task; judge: NlJudge | null },
  trajectory: readonly Tau2Message[],
  termination: TerminationReason,
  counts: { steps: number; errors: number },
): Promise<RewardBreakdown> {
  const { task, bundle, judge } = options;
  const basis = rewardBasis(task);
  const assertions = task.evaluation_criteria?.nl_assertions ?? [];
  const needsJudge = basis.includes("NL_ASSERTION") && assertions.length > 0;
  // Only a run tau2 would evaluate can lack a component; one cut short scores 0 whatever the judge says.
  const evaluated = termination === "agent_stop" || termination === "user_stop";
  let nl: Record<string, unknown> | null = null;
  if (basis.includes("NL_ASSERTION") && !needsJudge) {
    nl = { reward: 1.0, nl_assertions: [], reward_breakdown: { NL_ASSERTION: 1.0 }, info: { note: "No nl_assertions to evaluate" } };
  } else if (needsJudge && judge && evaluated) {
    let checks;
    try {
      checks = await judge(task, trajectory);
    } catch (error) {
      // tau2's evaluation raises (a malformed answer, a failed call): its runner retries the simulation, then
      // records an infrastructure error. Here the episode carries the evaluation error the retry rule reads.
      return evaluationFailure(basis, trajectory, termination, counts, judgeErrorText(error));
    }
    const reward = checks.every((check) => check.met) ? 1.0 : 0.0;
    nl = { reward, nl_assertions: checks, reward_breakdown: { NL_ASSERTION: reward }, info: null };
  }
  const partial = needsJudge && !judge && evaluated;
  const scoredTask: Tau2Task = partial
    ? {
        ...task,
        evaluation_criteria: task.evaluation_criteria && { ...task.evaluation_criteria, reward_basis: basis.filter((type) => type !== "NL_ASSERTION") },
      }
    : task;
  const result = evaluateOrError(bundle.domain, scoredTask, trajectory, { mode: "all", termination, nl });
  const info = result.reward_info;
  const breakdown = (info?.reward_breakdown ?? {}) as Record<string, number>;
  const components: Record<string, number | null> = {};
  // tau2 leaves a basis entry out of the breakdown when nothing was there to check (its factor is 1),
  // and leaves the whole breakdown out when the run ended prematurely (reward 0).
  const premature = !info?.reward_breakdown;
  for (const type of COMPONENTS) {
    if (!basis.includes(type)) continue;
    components[type] = type === "NL_ASSERTION" && partial ? null : premature ? 0 : (breakdown[type] ?? 1);
  }
  if (result.error) return evaluationFailure(basis, trajectory, termination, counts, result.error);
  const total = info ? (info.reward as number) : 0;
  const pass = !partial && total === 1 ? 1 : 0;
  return {
    total,
    components,
    formula: `product over the task's reward basis (${basis.join(" × ")})${partial ? "; NL_ASSERTION unscored (no judge): partial, never a pass" : ""}`,
    errors: [],
    diagnostics: {
      pass,
      partial: partial ? 1 : 0,
      steps: counts.steps,
      tool_errors: counts.errors,
      tau2_termination: termination,
      reward_info: (info ?? null) as JsonValue,
      tau2_messages: tau2MessagesJson(trajectory),
    },
  };
}

function judgeErrorText(error: unknown): string {
  if (error instanceof PythonError) return `${error.pythonType}: ${error.message}`;
  const code = (error as { code?: unknown }).code;
  return `${typeof code === "string" ? code : "Error"}: ${error instanceof Error ? error.message : String(error)}`;
}

/** A simulation whose evaluation raised: reward 0 with the error that makes it tau2's infrastructure error. */
function evaluationFailure(
  basis: RewardType[],
  trajectory: readonly Tau2Message[],
  termination: TerminationReason,
  counts: { steps: number; errors: number },
  error: string,
): RewardBreakdown {
  return {
    total: 0,
    components: Object.fromEntries(COMPONENTS.filter((type) => basis.includes(type)).map((type) => [type, 0])),
    formula: `product over the task's reward basis (${basis.join(" × ")}); tau2's evaluation raised (an infrastructure error in tau2's runner)`,
    errors: [{ type: "RewardError", code: "TAU2_EVALUATION_ERROR", message: `tau2's evaluator raised ${error}`, boundary: "reward" }],
    diagnostics: {
      pass: 0,
      partial: 0,
      steps: counts.steps,
      tool_errors: counts.errors,
      tau2_termination: termination,
      reward_info: null,
      evaluation_error: error,
      tau2_messages: tau2MessagesJson(trajectory),
    },
  };
}

/**
 * Whether tau2's evaluator would give the conversation so far a full reward if the user stopped now,
 * leaving out NL assertions (only a judge reads them): the scripted customer's "my goal is satisfied".
 */
export function goalHolds(options: { bundle: DomainBundle; task: Tau2Task }, trajectory: readonly Tau2Message[]): boolean {
  const { task, bundle } = options;
  const basis = rewardBasis(task).filter((type) => type !== "NL_ASSERTION");
  const scoredTask: Tau2Task = { ...task, evaluation_criteria: task.evaluation_criteria && { ...task.evaluation_criteria, reward_basis: basis } };
  const result = evaluateOrError(bundle.domain, scoredTask, trajectory, { mode: "all", termination: "user_stop", nl: null });
  return result.reward_info?.reward === 1;
}
