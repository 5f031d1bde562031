import { Tau2Environment, type Tau2Domain } from "./environment.ts";
import { PythonError, pythonEquals } from "../../python-semantics/index.ts";
import { exceptionText } from "./toolkit.ts";
import { rewardBasis, type RewardType, type Tau2Action, type Tau2Message, type Tau2Task } from "./types.ts";

/**
 * tau2's `evaluate_simulation` for half-duplex text runs: DB (replay the trajectory's calls on a fresh
 * environment, replay the gold actions on another, compare hashes), ENV_ASSERTION, ACTION, COMMUNICATE,
 * and NL_ASSERTION through an optional judge. The returned object has RewardInfo's field order, so its
 * JSON equals `model_dump(mode="json")`.
 */
type Row = Record<string, unknown>;

/** tau2's `TerminationReason` values, as its results files write them. */
export type TerminationReason =
  "user_stop" | "agent_stop" | "max_steps" | "timeout" | "too_many_errors" | "agent_error" | "user_error" | "infrastructure_error";

/** NL_ASSERTION judge: one verdict per assertion, as tau2's judge returns them. */
export type NlJudge = (task: Tau2Task, trajectory: readonly Tau2Message[]) => Promise<{ nl_assertion: string; met: boolean; justification: string }[]>;

function info(note: string): Row {
  return { note };
}

function rewardInfo(fields: Partial<Record<string, unknown>>): Row {
  return {
    reward: fields.reward,
    db_check: fields.db_check ?? null,
    env_assertions: fields.env_assertions ?? null,
    action_checks: fields.action_checks ?? null,
    nl_assertions: fields.nl_assertions ?? null,
    communicate_checks: fields.communicate_checks ?? null,
    reward_basis: fields.reward_basis ?? null,
    reward_breakdown: fields.reward_breakdown ?? null,
    info: fields.info ?? null,
  };
}

function evaluateEnvironment(domain: Tau2Domain, task: Tau2Task, basis: RewardType[], trajectory: readonly Tau2Message[]): Row {
  const criteria = task.evaluation_criteria;
  if (!criteria) return rewardInfo({ reward: 1.0, info: info("No evaluation criteria") });
  if (criteria.actions == null && criteria.env_assertions == null) {
    return rewardInfo({ reward: 1.0, db_check: { db_match: true, db_reward: 1.0 }, info: info("No expected actions or env assertions") });
  }
  const initial = task.initial_state;
  const predicted = new Tau2Environment(domain);
  predicted.setState(initial, trajectory);
  const gold = new Tau2Environment(domain);
  gold.setState(initial, initial?.message_history ?? []);
  for (const action of criteria.actions ?? []) {
    try {
      gold.makeToolCall(action.name, action.requestor ?? "assistant", action.arguments);
    } catch (error) {
      // tau2 logs a failing gold action and goes on.
      if (!(error instanceof PythonError)) throw error;
    }
  }
  const dbMatch = gold.sameDatabases(predicted);
  const dbReward = dbMatch ? 1.0 : 0.0;
  const checks: Row[] = [];
  let assertionReward = 1.0;
  for (const assertion of criteria.env_assertions ?? []) {
    const met = predicted.runEnvAssertion(assertion);
    const reward = met ? 1.0 : 0.0;
    checks.push({
      env_assertion: {
        env_type: assertion.env_type,
        func_name: assertion.func_name,
        arguments: assertion.arguments ?? {},
        assert_value: assertion.assert_value ?? true,
        message: assertion.message ?? null,
      },
      met,
      reward,
    });
    assertionReward *= reward;
  }
  let reward = 1.0;
  const breakdown: Row = {};
  if (basis.includes("DB")) {
    breakdown.DB = dbReward;
    reward *= dbReward;
  }
  if (basis.includes("ENV_ASSERTION")) {
    breakdown.ENV_ASSERTION = assertionReward;
    reward *= assertionReward;
  }
  return rewardInfo({ reward, db_check: { db_match: dbMatch, db_reward: dbReward }, env_assertions: checks, reward_basis: basis, reward_breakdown: breakdown });
}

export function actionMatches(action: Tau2Action, call: { name: string; arguments: Record<string, unknown> }): boolean {
  if (action.name !== call.name) return false;
  const keys = action.compare_args ?? Object.keys(call.arguments ?? {});
  if (keys.length === 0) return true;
  const pickKeys = (source: Record<string, unknown>): Row => Object.fromEntries(Object.entries(source ?? {}).filter(([key]) => keys.includes(key)));
  return pythonEquals(pickKeys(call.arguments), pickKeys(action.arguments));
}

function dumpAction(action: Tau2Action): Row {
  return {
    action_id: action.action_id,
    requestor: action.requestor ?? "assistant",
    name: action.name,
    arguments: action.arguments,
    info: action.info ?? null,
    compare_args: action.compare_args ?? null,
  };
}

function evaluateActions(domain: Tau2Domain, task: Tau2Task, trajectory: readonly Tau2Message[]): Row {
  const actions = task.evaluation_criteria?.actions;
  if (!actions || actions.length === 0) return rewardInfo({ reward: 1.0, info: info("No actions to evaluate"), reward_breakdown: { ACTION: 1.0 } });
  const calls = trajectory.flatMap((message) => ((message.role === "assistant" || message.role === "user") && message.tool_calls ? message.tool_calls : []));
  const types = new Tau2Environment(domain);
  const checks = actions.map((action) => {
    const matched = calls.some((call) => actionMatches(action, call));
    return { action: dumpAction(action), action_match: matched, action_reward: matched ? 1.0 : 0.0, tool_type: types.toolType(action.name) };
  });
  const reward = checks.every((check) => check.action_match) ? 1.0 : 0.0;
  return rewardInfo({ reward, action_checks: checks, reward_breakdown: { ACTION: reward } });
}

function hasText(message: Tau2Message): boolean {
  return typeof message.content === "string" && message.content.trim() !== "";
}

function evaluateCommunicate(task: Tau2Task, trajectory: readonly Tau2Message[]): Row {
  const wanted = task.evaluation_criteria?.communicate_info;
  if (!wanted || wanted.length === 0) return rewardInfo({ reward: 1.0, info: info("No communicate_info to evaluate"), reward_breakdown: { COMMUNICATE: 1.0 } });
  const checks = wanted.map((infoText) => {
    const message = trajectory.find(
      (candidate) =>
        candidate.role === "assistant" &&
        hasText(candidate) &&
        (candidate.content as string).toLowerCase().replaceAll(",", "").includes(infoText.toLowerCase()),
    );
    return message
      ? { info: infoText, met: true, justification: `Information '${infoText}' communicated in the message:\n '${message.content}'` }
      : { info: infoText, met: false, justification: `Information '${infoText}' not communicated.` };
  });
  const reward = checks.every((check) => check.met) ? 1.0 : 0.0;
  return rewardInfo({ reward, communicate_checks: checks, reward_breakdown: { COMMUNICATE: reward } });
}

export interface EvaluationOptions {
  mode: "all" | "all_ignore_basis";
  termination: TerminationReason;
  /** Results of the NL judge when one ran (`evaluateNl`); absent: NL_ASSERTION is not part of this evaluation. */
  nl?: Row | null;
}

/** `evaluate_simulation`; throws what tau2's evaluator would raise (e.g. an env assertion on a missing task). */
export function evaluateSimulation(domain: Tau2Domain, task: Tau2Task, trajectory: readonly Tau2Message[], options: EvaluationOptions): Row {
  if (options.termination !== "agent_stop" && options.termination !== "user_stop") {
    return rewardInfo({ reward: 0.0, info: info(`Simulation terminated prematurely. Termination reason: ${options.termination}`) });
  }
  if (!task.evaluation_criteria) return rewardInfo({ reward: 1.0, info: info("No evaluation criteria") });
  const basis = rewardBasis(task);
  const env = evaluateEnvironment(domain, task, basis, trajectory);
  const action = evaluateActions(domain, task, trajectory);
  const communicate = evaluateCommunicate(task, trajectory);
  const nl = options.nl ?? null;
  const useAll = options.mode === "all_ignore_basis";
  const included = (types: RewardType[]): boolean => useAll || types.some((type) => basis.includes(type));
  let reward = 1.0;
  const breakdown: Row = {};
  const parts: [Row | null, RewardType[]][] = [
    [env, ["DB", "ENV_ASSERTION"]],
    [action, ["ACTION"]],
    ...(useAll
      ? ([
          [communicate, ["COMMUNICATE"]],
          [nl, ["NL_ASSERTION"]],
        ] as [Row | null, RewardType[]][])
      : ([
          [nl, ["NL_ASSERTION"]],
          [communicate, ["COMMUNICATE"]],
        ] as [Row | null, RewardType[]][])),
  ];
  for (const [part, types] of parts) {
    if (!part || !included(types)) continue;
    if (part.reward_breakdown) Object.assign(breakdown, part.reward_breakdown);
    reward *= part.reward as number;
  }
  return rewardInfo({
    reward,
    db_check: env.db_check,
    env_assertions: env.env_assertions,
    action_checks: action.action_checks,
    nl_assertions: nl?.nl_assertions ?? null,
    communicate_checks: communicate.communicate_checks,
    reward_basis: useAll ? ["DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", ...(nl ? ["NL_ASSERTION"] : [])] : basis,
    reward_breakdown: breakdown,
    info: { env: env.info, nl: nl?.info ?? null, communicate: communicate.info, action: action.info },
  });
}

/** Runs an evaluation and reports tau2's own exception text instead of a result when it raises. */
export function evaluateOrError(...args: Parameters<typeof evaluateSimulation>): { reward_info: Row | null; error: string | null } {
  try {
    return { reward_info: evaluateSimulation(...args), error: null };
  } catch (error) {
    if (!(error instanceof PythonError)) throw error;
    return { reward_info: null, error: `${error.pythonType}: ${exceptionText(error)}` };
  }
}
