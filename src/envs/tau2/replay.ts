import { evaluateOrError } from "./evaluate.ts";
import { Tau2Environment } from "./environment.ts";
import { findTask, getDomain } from "./domains.ts";
import type { Requestor, Tau2Message, Tau2Task } from "./types.ts";
import { rewardBasis } from "./types.ts";

/**
 * Replays a tool-call sequence the way the reference cases were produced: the task's initial state, then
 * each call as its own message (id `replay_call_<i>`) with the environment's answer, then the assistant
 * texts; evaluated as an `agent_stop` run with NL_ASSERTION removed (no judge), and with the basis ignored.
 */
export interface ReplayInput {
  tool_calls: { name: string; arguments: Record<string, unknown>; requestor?: Requestor }[];
  assistant_texts?: string[];
}

export function replayCalls(domainId: string, taskId: string, input: ReplayInput) {
  const bundle = getDomain(domainId);
  const task = findTask(bundle, taskId);
  const environment = new Tau2Environment(bundle.domain);
  const history = task.initial_state?.message_history ?? [];
  environment.setState(task.initial_state, history);
  const trajectory: Tau2Message[] = [...history];
  const toolResults = input.tool_calls.map((call, index) => {
    const requestor = call.requestor ?? "assistant";
    const toolCall = { id: `replay_call_${index}`, name: call.name, arguments: call.arguments, requestor };
    trajectory.push({ role: requestor, content: null, tool_calls: [toolCall] });
    const outcome = environment.getResponse(toolCall);
    trajectory.push({ role: "tool", id: toolCall.id, content: outcome.content, error: outcome.error, requestor });
    return outcome;
  });
  for (const text of input.assistant_texts ?? []) trajectory.push({ role: "assistant", content: text });
  const basis = rewardBasis(task);
  const skipped = basis.includes("NL_ASSERTION");
  const withoutNl: Tau2Task = {
    ...task,
    evaluation_criteria: task.evaluation_criteria && { ...task.evaluation_criteria, reward_basis: basis.filter((type) => type !== "NL_ASSERTION") },
  };
  const scored = evaluateOrError(bundle.domain, withoutNl, trajectory, { mode: "all", termination: "agent_stop" });
  const ignoring = evaluateOrError(bundle.domain, task, trajectory, { mode: "all_ignore_basis", termination: "agent_stop" });
  return {
    tool_results: toolResults,
    db_hash: environment.dbHash(),
    user_db_hash: environment.userDbHash(),
    reward: scored.reward_info ? (scored.reward_info.reward as number) : null,
    reward_info: scored.reward_info,
    partial: skipped,
    nl_assertion_skipped: skipped,
    evaluation_error: scored.error,
    reward_ignore_basis: ignoring.reward_info ? (ignoring.reward_info.reward as number) : null,
    reward_info_ignore_basis: ignoring.reward_info,
    evaluation_error_ignore_basis: ignoring.error,
  };
}
