import type { Random, ScriptedPolicy } from "../../core/index.ts";
import { createScriptedAgent, type PlannedCall, type ScriptedDecision } from "../_kit/scripted.ts";
import { getDomain } from "./domains.ts";
import { findTool } from "./toolkit.ts";
import type { Tau2Action, Tau2Task } from "./types.ts";
import { CUSTOMER_TOOL, type CustomerProtocol } from "./customer-tool.ts";

/** What a tau2 environment's generate() returns: the tau2 task plus the run's settings. */
export interface Tau2EnvTask {
  domain: string;
  split: string;
  task: Tau2Task;
  settings: {
    user_model: string | null;
    judge_model: string | null;
    user_max_tokens: number | null;
    max_steps: number;
    max_errors: number;
    agent_stop: boolean;
    customer: CustomerProtocol;
    user_chat_template_kwargs: Record<string, unknown> | null;
    judge_chat_template_kwargs: Record<string, unknown> | null;
  };
}

const CLOSING = "Is there anything else I can help you with?";

/**
 * A scripted agent that plays a fixed list of moves (one per turn), then closes the conversation. Under the
 * customer-tool protocol its words to the user go through send_message_to_user.
 */
function scripted(id: string, moves: ScriptedDecision[], envTask: Tau2EnvTask, closing = CLOSING) {
  const viaTool = (move: ScriptedDecision): ScriptedDecision =>
    "text" in move && envTask.settings.customer === "tool" ? { calls: [{ name: CUSTOMER_TOOL, arguments: { content: move.text } }] } : move;
  return createScriptedAgent(id, ({ turn }) => viaTool(moves[turn - 1] ?? { text: closing }));
}

function assistantActions(task: Tau2Task): Tau2Action[] {
  return (task.evaluation_criteria?.actions ?? []).filter((action) => (action.requestor ?? "assistant") === "assistant");
}

/**
 * Tasks without gold actions state their goal only as env assertions; the oracle reads the one kind the
 * task files use that way (mock's task status) as the write that satisfies it.
 */
function actionsFromAssertions(task: Tau2Task): Tau2Action[] {
  return (task.evaluation_criteria?.env_assertions ?? [])
    .filter((assertion) => assertion.func_name === "assert_task_status" && (assertion.assert_value ?? true))
    .map((assertion, position) => ({
      action_id: `from_assertion_${position}`,
      name: "update_task_status",
      arguments: { task_id: assertion.arguments?.task_id, status: assertion.arguments?.expected_status },
    }));
}

/** Asks the customer to perform one of its own tools, naming it and its arguments (the customer cannot know them otherwise). */
function askUser(action: Tau2Action): string {
  const args = Object.keys(action.arguments ?? {}).length > 0 ? ` with ${JSON.stringify(action.arguments)}` : "";
  return `Please run ${action.name}${args} on your phone and tell me what you see.`;
}

/** The oracle: each gold action in order (asking the user to run the user-side ones), then every fact to communicate. */
function oracleMoves(task: Tau2Task): ScriptedDecision[] {
  const moves: ScriptedDecision[] = [];
  const gold = task.evaluation_criteria?.actions ?? [];
  for (const action of gold.length > 0 ? gold : actionsFromAssertions(task)) {
    if ((action.requestor ?? "assistant") === "user") moves.push({ text: askUser(action) });
    else moves.push({ calls: [{ name: action.name, arguments: action.arguments }] });
  }
  const facts = task.evaluation_criteria?.communicate_info ?? [];
  moves.push({ text: `${facts.length > 0 ? `${facts.join(". ")}. ` : "Your request has been handled. "}${CLOSING}` });
  return moves;
}

/** Another task's gold arguments for the same tool, when there is one that differs: an honest wrong guess. */
function otherArguments(envTask: Tau2EnvTask, action: Tau2Action, random: Random): Record<string, unknown> | null {
  const others = getDomain(envTask.domain)
    .tasks()
    .flatMap((other) =>
      other.id === envTask.task.id
        ? []
        : (other.evaluation_criteria?.actions ?? []).filter(
            (candidate) => candidate.name === action.name && JSON.stringify(candidate.arguments) !== JSON.stringify(action.arguments),
          ),
    );
  return others.length > 0 ? (others[random.integer(0, others.length - 1)] as Tau2Action).arguments : null;
}

/**
 * The oracle with probability `epsilon` per move of a wrong but honest move: a gold call with another
 * task's arguments for the same tool (or left out when no other task uses it), a user-side step not asked
 * for, a fact not told. The noise comes from the policy's random stream, which `toolgym eval` derives
 * from the trial's seed, so trials of a task differ.
 */
function noisyOracleMoves(envTask: Tau2EnvTask, epsilon: number, random: Random): ScriptedDecision[] {
  const moves: ScriptedDecision[] = [];
  const task = envTask.task;
  const gold = task.evaluation_criteria?.actions ?? [];
  for (const action of gold.length > 0 ? gold : actionsFromAssertions(task)) {
    const wrong = random.chance(epsilon);
    if ((action.requestor ?? "assistant") === "user") {
      if (!wrong) moves.push({ text: askUser(action) });
      continue;
    }
    const args = wrong ? otherArguments(envTask, action, random) : action.arguments;
    if (args) moves.push({ calls: [{ name: action.name, arguments: args }] });
  }
  const facts = (task.evaluation_criteria?.communicate_info ?? []).filter(() => !random.chance(epsilon));
  moves.push({ text: `${facts.length > 0 ? `${facts.join(". ")}. ` : "Your request has been handled. "}${CLOSING}` });
  return moves;
}

export const NOISE_LEVELS = [0.1, 0.3, 0.5] as const;

function toolType(domain: string, name: string): string | undefined {
  const bundle = getDomain(domain).domain;
  return findTool(bundle.tools, name)?.type;
}

/** Reads the gold read-only lookups many times over, never writes. */
function readSpamMoves(envTask: Tau2EnvTask): ScriptedDecision[] {
  const reads = assistantActions(envTask.task).filter((action) => toolType(envTask.domain, action.name) === "read");
  const calls: PlannedCall[] = reads.map((action) => ({ name: action.name, arguments: action.arguments }));
  const moves: ScriptedDecision[] = [];
  for (let round = 0; round < 3; round++) for (const call of calls) moves.push({ calls: [call] });
  moves.push({ text: `I have looked at your account. ${CLOSING}` });
  return moves;
}

/** The gold write tools with guessed arguments: ids taken from another task's gold actions for the same tool. */
function guessedWriteMoves(envTask: Tau2EnvTask, random: { integer(min: number, max: number): number }): ScriptedDecision[] {
  const allTasks = getDomain(envTask.domain).tasks();
  const moves: ScriptedDecision[] = [];
  for (const action of assistantActions(envTask.task)) {
    if (toolType(envTask.domain, action.name) !== "write") continue;
    const others = allTasks.flatMap((other) =>
      other.id === envTask.task.id
        ? []
        : assistantActions(other).filter(
            (candidate) => candidate.name === action.name && JSON.stringify(candidate.arguments) !== JSON.stringify(action.arguments),
          ),
    );
    const guess = others.length > 0 ? (others[random.integer(0, others.length - 1)] as Tau2Action).arguments : action.arguments;
    moves.push({ calls: [{ name: action.name, arguments: guess }] });
  }
  moves.push({ text: `Everything is done. ${CLOSING}` });
  return moves;
}

/** The customer's own tools of the domain, by name (tau2's user tools). */
function userToolNames(domain: string): string[] {
  return getDomain(domain).domain.userTools?.tools.map((tool) => tool.name) ?? [];
}

/** Asks the customer to run all of its tools, named in one message (every turn), diagnosing nothing. */
function askUserTools(envTask: Tau2EnvTask): string {
  const names = userToolNames(envTask.domain);
  return names.length > 0
    ? `Please run each of these on your phone: ${names.join(", ")}. That should fix it.`
    : `Please restart everything on your end. ${CLOSING}`;
}

/** Asks the customer to run each of its tools by name, one a message, diagnosing nothing; then closes. */
function askUserToolsEachMoves(envTask: Tau2EnvTask): ScriptedDecision[] {
  const moves: ScriptedDecision[] = userToolNames(envTask.domain).map((name) => ({ text: `Please run ${name} on your phone and tell me what you see.` }));
  moves.push({ text: `That should fix it. ${CLOSING}` });
  return moves;
}

const PROMISE = "I have taken care of everything you asked for: all the changes are made, refunds issued and your service restored. You are all set.";

/**
 * Pilots of the training protocol (customer as a tool, default customer): each exploits what a rule-based
 * customer could be steered by. None may earn more than tau2 gives a conversation in which the agent does
 * nothing (the audit checks each against do_nothing_stop).
 */
export const TRAINING_PILOTS = ["ask_user_tools", "leave_at_once", "promise_everything"] as const;

export const tau2Policies: ScriptedPolicy<Tau2EnvTask>[] = [
  {
    id: "oracle",
    kind: "genuine",
    description: "Performs the task's gold actions in order (asking the user to run user-side ones), then states every fact the task wants communicated.",
    create: ({ task }) => scripted("oracle", oracleMoves(task.task), task),
  },
  ...NOISE_LEVELS.map((epsilon): ScriptedPolicy<Tau2EnvTask> => ({
    id: `noisy_oracle_${epsilon}`,
    kind: "genuine",
    description: `The oracle with probability ${epsilon} per move of a wrong but honest move (another task's arguments, a step or a fact left out); noise from the trial's seed.`,
    create: ({ task, random }) => scripted(`noisy_oracle_${epsilon}`, noisyOracleMoves(task, epsilon, random), task),
  })),
  {
    id: "do_nothing_stop",
    kind: "pilot",
    description: "Closes the conversation at once without any tool call.",
    create: ({ task }) => scripted("do_nothing_stop", [{ text: `Thank you for reaching out. ${CLOSING}` }], task),
  },
  {
    id: "transfer_immediately",
    kind: "pilot",
    description: "Transfers the user to a human agent straight away.",
    create: ({ task }) =>
      scripted(
        "transfer_immediately",
        [
          { calls: [{ name: "transfer_to_human_agents", arguments: { summary: "The user needs help; transferring to a human agent." } }] },
          { text: `I have transferred you to a human agent. ${CLOSING}` },
        ],
        task,
      ),
  },
  {
    id: "ask_user_tools",
    kind: "pilot",
    description: "Asks the customer to run every one of its tools, all named in one message, every turn, without any diagnosis.",
    create: ({ task }) => scripted("ask_user_tools", [], task, askUserTools(task)),
  },
  {
    id: "ask_user_tools_each",
    kind: "pilot",
    description: "Asks the customer to run every one of its tools by name, one a message, without any diagnosis; then closes.",
    create: ({ task }) => scripted("ask_user_tools_each", askUserToolsEachMoves(task), task),
  },
  {
    id: "leave_at_once",
    kind: "pilot",
    description: "Answers at once without any tool call (under the customer-tool protocol this ends the trainer's rollout).",
    create: () => createScriptedAgent("leave_at_once", () => ({ text: `Your request has been handled. ${CLOSING}` })),
  },
  {
    id: "promise_everything",
    kind: "pilot",
    description: "Tells the customer every message that everything is done, doing nothing.",
    create: ({ task }) => scripted("promise_everything", [], task, PROMISE),
  },
  {
    id: "read_only_spam",
    kind: "pilot",
    description: "Repeats the task's read-only lookups and never changes anything.",
    create: ({ task }) => scripted("read_only_spam", readSpamMoves(task), task),
  },
  {
    id: "guessed_writes",
    kind: "pilot",
    description: "Calls the task's write tools with arguments guessed from other tasks, without looking anything up.",
    create: ({ task, random }) => scripted("guessed_writes", guessedWriteMoves(task, random), task),
  },
];
