import type { Episode, JsonValue, Message, RewardBreakdown, TerminationReason as HarnessTermination, ToolResult, ToolSpec } from "../../core/index.ts";
import type { DomainBundle } from "./domains.ts";
import { Tau2Environment } from "./environment.ts";
import { evaluateOrError, type NlJudge, type TerminationReason } from "./evaluate.ts";
import { FIRST_AGENT_MESSAGE, STOP, agentSystemPrompt, isUserStop } from "./prompts.ts";
import { rewardBasis, type RewardType, type Tau2Message, type Tau2Task } from "./types.ts";
import type { UserCall, UserSimulator } from "./user.ts";

/**
 * One tau2 simulation as a toolgym episode: tau2's orchestrator with the harness as the agent side. The
 * agent opens with tau2's greeting; a text reply goes to the user simulator, whose tool calls run on the
 * user side of the same environment; tau2's `max_steps` and cumulative `max_errors` end the run early.
 */
export interface Tau2EpisodeOptions {
  bundle: DomainBundle;
  task: Tau2Task;
  user: UserSimulator;
  judge: NlJudge | null;
  tools: ToolSpec[];
  maxSteps: number;
  maxErrors: number;
}

const MAX_USER_TOOL_ROUNDS = 10;

/** The history's messages as the agent sees them (tau2 hides the user's own tool calls from the agent). */
function historyForAgent(history: readonly Tau2Message[]): Message[] {
  const messages: Message[] = [];
  const hidden = new Set<string>();
  for (const message of history) {
    if (message.role === "assistant") {
      const calls = (message.tool_calls ?? []).map((call) => ({
        id: call.id ?? "",
        type: "function" as const,
        function: { name: call.name, arguments: JSON.stringify(call.arguments) },
      }));
      messages.push({ role: "assistant", content: message.content ?? null, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
    } else if (message.role === "user") {
      if (message.tool_calls?.length) message.tool_calls.forEach((call) => hidden.add(call.id ?? ""));
      else messages.push({ role: "user", content: message.content ?? "" });
    } else if (message.role === "tool" && !hidden.has(message.id ?? "")) {
      messages.push({ role: "tool", tool_call_id: message.id ?? "", content: message.content ?? "" });
    }
  }
  return messages;
}

export class Tau2Episode implements Episode {
  readonly protocol = "tools" as const;
  readonly conversational = true;
  readonly messages: Message[];
  readonly environment: Tau2Environment;
  /** The run in tau2's message format (what tau2's evaluator reads). */
  readonly trajectory: Tau2Message[];
  private steps = 0;
  private errors = 0;
  private callCounter = 0;
  private ending: TerminationReason | null = null;
  private cached: RewardBreakdown | null = null;

  constructor(private readonly options: Tau2EpisodeOptions) {
    const { bundle, task } = options;
    const history = task.initial_state?.message_history ?? [];
    this.environment = new Tau2Environment(bundle.domain);
    this.environment.setState(task.initial_state, history);
    this.trajectory = [...history];
    this.messages = [{ role: "system", content: agentSystemPrompt(bundle.policy()) }, ...historyForAgent(history)];
    if (history.length === 0) {
      this.trajectory.push({ role: "assistant", content: FIRST_AGENT_MESSAGE });
      this.messages.push({ role: "assistant", content: FIRST_AGENT_MESSAGE });
    }
  }

  get tools(): ToolSpec[] {
    return this.options.tools;
  }

  get done(): boolean {
    return this.ending !== null;
  }

  get truncated(): boolean {
    return this.ending === "max_steps" || this.ending === "too_many_errors";
  }

  /** The user's first message, answering the greeting (or the history's last agent message). */
  async opening(): Promise<Message[]> {
    const last = this.trajectory.at(-1);
    if (last && last.role === "user") return [];
    const text = await this.userTurn(last?.content ?? FIRST_AGENT_MESSAGE);
    return [{ role: "user", content: text }];
  }

  private step(): void {
    this.steps++;
    if (this.ending === null && this.steps >= this.options.maxSteps) this.ending = "max_steps";
  }

  call(name: string, args: unknown): ToolResult {
    const id = `toolgym_call_${++this.callCounter}`;
    const toolCall = { id, name, arguments: args as Record<string, unknown>, requestor: "assistant" as const };
    this.trajectory.push({ role: "assistant", content: null, tool_calls: [toolCall] });
    this.step();
    const outcome = this.environment.getResponse(toolCall);
    this.trajectory.push({ role: "tool", id, content: outcome.content, error: outcome.error, requestor: "assistant" });
    this.step();
    if (outcome.error && ++this.errors >= this.options.maxErrors) this.ending ??= "too_many_errors";
    return { content: outcome.content, isError: outcome.error, ...(outcome.error ? { errorKind: "tool_error" } : {}), done: this.done };
  }

  async reply(text: string): Promise<ToolResult> {
    this.trajectory.push({ role: "assistant", content: text });
    this.step();
    if (text.includes(STOP)) this.ending ??= "agent_stop";
    if (this.done) return { content: "", isError: false, done: true };
    const answer = await this.userTurn(text);
    return { content: answer, isError: false, done: this.done };
  }

  /** Runs the user until it says something: its tool calls execute on the user side and feed back to it. */
  private async userTurn(agentText: string): Promise<string> {
    let move = await this.options.user.respond({ agentText });
    for (let round = 0; "calls" in move && round < MAX_USER_TOOL_ROUNDS && !this.done; round++) {
      const results = this.runUserCalls(move.calls, move.text ?? null);
      move = await this.options.user.respond({ toolResults: results });
    }
    const text = "calls" in move ? (move.text ?? "") : move.text;
    this.trajectory.push({ role: "user", content: text });
    this.step();
    if (isUserStop(text)) this.ending ??= "user_stop";
    return text;
  }

  private runUserCalls(calls: UserCall[], text: string | null): { call: UserCall; content: string }[] {
    const toolCalls = calls.map((call) => ({
      id: `toolgym_user_call_${++this.callCounter}`,
      name: call.name,
      arguments: call.arguments,
      requestor: "user" as const,
    }));
    this.trajectory.push({ role: "user", content: text, tool_calls: toolCalls });
    this.step();
    return toolCalls.map((toolCall, position) => {
      const outcome = this.environment.getResponse(toolCall);
      this.trajectory.push({ role: "tool", id: toolCall.id, content: outcome.content, error: outcome.error, requestor: "user" });
      this.step();
      if (outcome.error && ++this.errors >= this.options.maxErrors) this.ending ??= "too_many_errors";
      return { call: calls[position] as UserCall, content: outcome.content };
    });
  }

  /** tau2's termination reason; a harness-side end (turn limit) counts as tau2's `max_steps`. */
  termination(endedBy: HarnessTermination): TerminationReason {
    if (this.ending) return this.ending;
    return endedBy === "errored" ? "agent_error" : "max_steps";
  }

  async reward({ endedBy }: { endedBy: HarnessTermination }): Promise<RewardBreakdown> {
    if (this.cached) return this.cached;
    this.cached = await scoreEpisode(this.options, this.trajectory, this.termination(endedBy), { steps: this.steps, errors: this.errors });
    return this.cached;
  }

  diagnostics(): Record<string, JsonValue> {
    return { tau2_task_id: this.options.task.id, steps: this.steps, tool_errors: this.errors, tau2_termination: this.ending ?? "running" };
  }
}

const COMPONENTS: RewardType[] = ["DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION"];

/**
 * tau2's reward: the product over the task's basis. NL_ASSERTION goes to the judge when the task has
 * assertions; without a judge it stays unscored (null), the episode is `partial` and never a pass.
 */
export async function scoreEpisode(
  options: Pick<Tau2EpisodeOptions, "bundle" | "task" | "judge">,
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
    const checks = await judge(task, trajectory);
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
  const total = info ? (info.reward as number) : 0;
  const pass = !partial && total === 1 ? 1 : 0;
  return {
    total,
    components,
    formula: `product over the task's reward basis (${basis.join(" × ")})${partial ? "; NL_ASSERTION unscored (no judge): partial, never a pass" : ""}`,
    errors: result.error
      ? [{ type: "RewardError", code: "TAU2_EVALUATION_ERROR", message: `tau2's evaluator raised ${result.error}`, boundary: "reward" }]
      : [],
    diagnostics: {
      pass,
      partial: partial ? 1 : 0,
      steps: counts.steps,
      tool_errors: counts.errors,
      tau2_termination: termination,
      reward_info: (info ?? null) as JsonValue,
    },
  };
}
