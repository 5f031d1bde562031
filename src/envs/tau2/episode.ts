import {
  ToolInputError,
  type AssistantMessage,
  type Episode,
  type EpisodeResponse,
  type JsonValue,
  type Message,
  type RewardBreakdown,
  type TerminationReason as HarnessTermination,
  type ToolMessage,
  type ToolResult,
  type ToolSpec,
} from "../../core/index.ts";
import { parsePythonJson } from "../../python-semantics/index.ts";
import type { DomainBundle } from "./domains.ts";
import { Tau2Environment } from "./environment.ts";
import type { NlJudge, TerminationReason } from "./evaluate.ts";
import { FIRST_AGENT_MESSAGE, STOP, agentSystemPrompt, isUserStop } from "./prompts.ts";
import { historyForAgent, withModelDefaults } from "./history.ts";
import { tau2MessagesJson, tau2Now } from "./record.ts";
import { tau2RequestMessages } from "./request.ts";
import { goalHolds, scoreEpisode } from "./score.ts";
import { rewardBasis, type Tau2Message, type Tau2Task, type Tau2ToolCall } from "./types.ts";
import type { UserSimulator } from "./user.ts";
import { AFTER_END, CUSTOMER_LEFT, CUSTOMER_TOOL, customerContent, customerToolSpec, leaderboardProtocolRefusal } from "./customer-tool.ts";

export { scoreEpisode } from "./score.ts";

/**
 * One tau2 simulation as a toolgym episode, routed as tau2's half-duplex `Orchestrator` routes it: a
 * message with tool calls goes to the environment (its text stays in the record), any other agent
 * message goes to the user simulator, and the user's own tool calls run on the user side. Only the user
 * (stop, transfer, out-of-scope markers), `max_steps` or `max_errors` end a run; each routed message is
 * one step, and the limits are checked whenever the environment is not the next to speak.
 */
export interface Tau2EpisodeOptions {
  bundle: DomainBundle;
  task: Tau2Task;
  user: UserSimulator;
  judge: NlJudge | null;
  tools: ToolSpec[];
  maxSteps: number;
  maxErrors: number;
  /** toolgym's opt-in (config `agent_stop`): the agent's `###STOP###` ends the run, as tau2's solo agent's does. */
  agentStop?: boolean;
  /**
   * toolgym's training protocol (config `customer: "tool"`): the agent reaches the customer only through
   * `send_message_to_user`, every tool call is routed as its own message (as a trainer's calls reach the
   * server), and a message without tool calls ends the run before the user has (tau2 scores that 0).
   */
  customerTool?: boolean;
  /** The environment's id, for the server's refusal of a leaderboard-protocol session. */
  envId?: string;
  /** Aborted by `close()`: the user simulator's and the judge's requests listen to its signal. */
  closing?: AbortController;
}

type Role = "agent" | "user" | "env";

/** A top-level dict of arguments as an object (keyword arguments need no key order). */
function plainDict(value: unknown): unknown {
  return value instanceof Map ? Object.fromEntries(value) : value;
}

/** tau2's `has_text_content`: text that is not only whitespace. */
function hasText(text: string | null | undefined): boolean {
  return typeof text === "string" && text.trim() !== "";
}

/** A simulation tau2's runner would not finish: it raises, retries, and records `infrastructure_error`. */
function infrastructureError(code: string, message: string): ToolInputError {
  return new ToolInputError({ code, message: `${message}; tau2's runner records such a simulation as infrastructure_error (excluded from its metrics)` });
}

export class Tau2Episode implements Episode {
  readonly protocol = "tools" as const;
  readonly messages: Message[];
  readonly environment: Tau2Environment;
  /** The run in tau2's message format (what tau2's evaluator reads and its results file holds). */
  readonly trajectory: Tau2Message[];
  private steps = 0;
  private errors = 0;
  private callCounter = 0;
  private ending: TerminationReason | null = null;
  private cached: RewardBreakdown | null = null;
  /** Customer-tool protocol: the agent answered without a tool call before the user ended the run. */
  private agentLeft = false;
  /** tau2's routing state: who sent the last message and who receives it next. */
  private from: Role = "agent";
  private to: Role = "user";
  private current: Tau2Message[] = [];

  constructor(private readonly options: Tau2EpisodeOptions) {
    const { bundle, task } = options;
    const start = Date.now() - 1000 * (task.initial_state?.message_history?.length ?? 0);
    // tau2 stamps a task's history one second apart, ending now, and clears its turn indices.
    const history = (task.initial_state?.message_history ?? []).map((message, position) => ({
      ...withModelDefaults(message),
      timestamp: tau2Now(new Date(start + 1000 * position)),
    }));
    this.environment = new Tau2Environment(bundle.domain);
    this.environment.setState(task.initial_state, history);
    this.trajectory = [...history];
    this.messages = [{ role: "system", content: agentSystemPrompt(bundle.policy()) }, ...historyForAgent(history)];
    const last = history.at(-1);
    if (!last) {
      const greeting: Tau2Message = { role: "assistant", content: FIRST_AGENT_MESSAGE, timestamp: tau2Now() };
      this.trajectory.push(greeting);
      this.messages.push({ role: "assistant", content: FIRST_AGENT_MESSAGE });
      this.current = [greeting];
    } else if (last.role === "assistant") {
      this.from = "agent";
      this.to = last.tool_calls ? "env" : "user";
      this.current = [last];
      if (options.agentStop && last.content?.includes(STOP)) this.ending = "agent_stop";
    } else if (last.role === "user") {
      this.from = "user";
      this.to = last.tool_calls ? "env" : "agent";
      this.current = [last];
      if (!last.tool_calls && isUserStop(last.content)) this.ending = "user_stop";
    } else {
      this.from = "env";
      this.to = (last.requestor ?? "assistant") === "assistant" ? "agent" : "user";
      this.current = [last];
    }
  }

  get tools(): ToolSpec[] {
    return this.options.customerTool ? [...this.options.tools, customerToolSpec] : this.options.tools;
  }

  /** The agent's request messages as tau2's `to_litellm_messages` builds them (the training protocol keeps toolgym's). */
  view(messages: Message[]): Message[] {
    return this.options.customerTool ? messages : tau2RequestMessages(messages);
  }

  /** Under the leaderboard protocol the user simulator reads the agent's plain messages. */
  get conversational(): boolean {
    return !this.options.customerTool;
  }

  get trainerRefusal(): string | undefined {
    return this.options.customerTool ? undefined : leaderboardProtocolRefusal(this.options.envId ?? "tau2");
  }

  /** Without a judge, a task whose basis includes NL_ASSERTION would be trained on a reward that leaves its assertions out. */
  get partialReward(): string | undefined {
    const { task, judge, envId } = this.options;
    const assertions = task.evaluation_criteria?.nl_assertions ?? [];
    if (judge || assertions.length === 0 || !rewardBasis(task).includes("NL_ASSERTION")) return undefined;
    return (
      `${envId ?? "tau2"} task ${task.id}: its reward includes ${assertions.length} NL assertion(s), which only a judge scores, and this session has none; ` +
      `give the config {"judge_model": NAME} (a --model of toolgym serve), or start toolgym serve with --allow-partial-rewards to train on the reward without them`
    );
  }

  /** Aborts the user model's (or judge's) request in flight: nobody will read its answer. */
  close(): void {
    this.options.closing?.abort(new Error("the episode was closed"));
  }

  get done(): boolean {
    return this.ending !== null;
  }

  get truncated(): boolean {
    return this.ending === "max_steps" || this.ending === "too_many_errors";
  }

  /** What happens before the agent's first turn: the user's first message (or the history's pending moves). */
  async opening(): Promise<Message[]> {
    return (await this.advance()).messages;
  }

  /** tau2 counts every routed message as a step and checks its limits unless the environment speaks next. */
  private stepDone(): void {
    this.steps++;
    if (this.to === "env") return;
    if (this.steps >= this.options.maxSteps) this.ending = "max_steps";
    if (this.errors >= this.options.maxErrors) this.ending = "too_many_errors";
  }

  /** The agent's whole message: recorded as it is, then routed to the tools or to the user. */
  async respond(message: AssistantMessage): Promise<EpisodeResponse> {
    if (this.options.customerTool) return this.respondWithTools(message);
    this.agentMessage(message.content, this.parseCalls(message));
    return this.advance();
  }

  /** tau2's `generate` runs `json.loads` on each call's arguments and needs a JSON object there. */
  private parseCalls(message: AssistantMessage): Tau2ToolCall[] {
    return (message.tool_calls ?? []).map((call) => {
      const text = call.function?.arguments;
      let value: unknown = text;
      if (typeof text === "string") {
        try {
          // json.loads' types: `2.0` stays a float, big integers stay exact.
          value = plainDict(parsePythonJson(text));
        } catch (error) {
          this.ending = "infrastructure_error";
          throw infrastructureError("TAU2_TOOL_CALL_INVALID", `the agent's arguments for ${call.function?.name} are not JSON (${(error as Error).message})`);
        }
      }
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        this.ending = "infrastructure_error";
        throw infrastructureError("TAU2_TOOL_CALL_INVALID", `the agent's arguments for ${call.function?.name} are not a JSON object`);
      }
      const id = call.id || `toolgym_call_${++this.callCounter}`;
      return { id, name: call.function?.name ?? "", arguments: value as Record<string, unknown>, requestor: "assistant" as const };
    });
  }

  private agentMessage(content: string | null | undefined, calls: Tau2ToolCall[]): void {
    if (calls.length === 0 && !hasText(content)) {
      this.ending = "infrastructure_error";
      throw infrastructureError("TAU2_EMPTY_MESSAGE", "the agent sent a message with neither text nor tool calls");
    }
    const message: Tau2Message = { role: "assistant", content: content ?? null, tool_calls: calls.length > 0 ? calls : null, timestamp: tau2Now() };
    this.trajectory.push(message);
    if (this.options.agentStop && content?.includes(STOP)) this.ending = "agent_stop";
    this.current = [message];
    this.from = "agent";
    this.to = calls.length > 0 ? "env" : "user";
    this.stepDone();
  }

  /** Runs the environment and the user until the agent is next to speak or the run has ended. */
  private async advance(): Promise<EpisodeResponse> {
    const messages: Message[] = [];
    let toolErrors: boolean[] = [];
    while (!this.done && this.to !== "agent") {
      if (this.to === "env") {
        const results = this.runTools();
        if ((this.to as Role) === "agent") {
          toolErrors = results.map((result) => result.error ?? false);
          messages.push(...results.map((result) => this.toolMessageForAgent(result)));
        }
      } else {
        const message = await this.userTurn();
        if ((this.to as Role) === "agent") messages.push({ role: "user", content: message.content ?? "" });
      }
    }
    return { messages, toolErrors };
  }

  private toolMessageForAgent(result: Tau2Message): ToolMessage {
    const call = this.trajectory
      .find((message) => message.tool_calls?.some((item) => item.id === result.id))
      ?.tool_calls?.find((item) => item.id === result.id);
    return { role: "tool", tool_call_id: result.id ?? "", ...(call ? { name: call.name } : {}), content: result.content ?? "" };
  }

  /** The environment answers every tool call of the current message; each error counts towards `max_errors`. */
  private runTools(): Tau2Message[] {
    const calls = this.current[0]?.tool_calls ?? [];
    const results = calls.map((call) => {
      const outcome = this.environment.getResponse(call);
      if (outcome.error) this.errors++;
      return {
        role: "tool" as const,
        id: call.id ?? "",
        content: outcome.content,
        error: outcome.error,
        requestor: call.requestor ?? "assistant",
        timestamp: tau2Now(),
      };
    });
    this.trajectory.push(...results);
    this.current = results;
    this.to = this.from;
    this.from = "env";
    this.stepDone();
    return results;
  }

  private async userTurn(): Promise<Tau2Message> {
    const event =
      this.from === "env"
        ? {
            toolResults: this.current.map((result) => {
              const call = this.trajectory.flatMap((message) => message.tool_calls ?? []).find((item) => item.id === result.id);
              return { call: { name: call?.name ?? "", arguments: call?.arguments ?? {} }, content: result.content ?? "" };
            }),
          }
        : { agentText: this.current[0]?.content ?? "" };
    const move = await this.options.user.respond(event);
    const calls: Tau2ToolCall[] = move.calls.map((call) => ({
      id: call.id || `toolgym_user_call_${++this.callCounter}`,
      name: call.name,
      arguments: call.arguments,
      requestor: "user",
    }));
    if (calls.length === 0 && !hasText(move.text)) {
      this.ending = "infrastructure_error";
      throw infrastructureError("TAU2_EMPTY_MESSAGE", "the user simulator sent a message with neither text nor tool calls");
    }
    const message: Tau2Message = {
      role: "user",
      content: move.text,
      tool_calls: calls.length > 0 ? calls : null,
      timestamp: tau2Now(),
      usage: move.usage ?? null,
    };
    if (calls.length === 0 && isUserStop(move.text)) this.ending = "user_stop";
    this.trajectory.push(message);
    this.current = [message];
    this.from = "user";
    this.to = calls.length > 0 ? "env" : "agent";
    this.stepDone();
    return message;
  }

  /**
   * One tool call driven from outside (the environment server): an agent message with that one call.
   * Arguments that are not an object answer with the tool's TypeError rather than failing the session.
   */
  call(name: string, args: unknown, callId?: string): ToolResult {
    const id = callId || `toolgym_call_${++this.callCounter}`;
    this.agentMessage(null, [{ id, name, arguments: args as Record<string, unknown>, requestor: "assistant" }]);
    const [result] = this.runTools();
    const error = result?.error ?? false;
    return { content: result?.content ?? "", isError: error, ...(error ? { errorKind: "tool_error" } : {}), done: this.done };
  }

  /** A text message driven from outside: routed to the user, whose answer comes back. */
  async reply(text: string): Promise<ToolResult> {
    this.agentMessage(text, []);
    const { messages } = await this.advance();
    const answer = messages.find((message) => message.role === "user");
    return { content: answer?.content ?? "", isError: false, done: this.done };
  }

  /**
   * The customer-tool protocol: each tool call in order, as the server receives them one by one; the
   * message's free text reaches no one (a trainer's tool loop sends only the calls). A message without
   * tool calls ends the run where TRL's loop ends it.
   */
  private async respondWithTools(message: AssistantMessage): Promise<EpisodeResponse> {
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) {
      this.agentLeft = true;
      this.ending ??= "max_steps";
      return { messages: [], toolErrors: [] };
    }
    const messages: Message[] = [];
    const toolErrors: boolean[] = [];
    for (const call of calls) {
      const name = call.function?.name ?? "";
      let args: unknown;
      try {
        args = plainDict(parsePythonJson(call.function?.arguments || "{}"));
      } catch (error) {
        messages.push({ role: "tool", tool_call_id: call.id, name, content: `Error: the arguments are not JSON (${(error as Error).message})` });
        toolErrors.push(true);
        continue;
      }
      const result = this.done ? { content: AFTER_END, isError: true } : await (this.callAsync(name, args) ?? this.call(name, args, call.id));
      messages.push({ role: "tool", tool_call_id: call.id, name, content: result.content });
      toolErrors.push(result.isError);
    }
    return { messages, toolErrors };
  }

  /** `send_message_to_user` under the customer-tool protocol: the customer's reply (undefined for every other tool). */
  callAsync(name: string, args: unknown): Promise<ToolResult> | undefined {
    if (!this.options.customerTool || name !== CUSTOMER_TOOL) return undefined;
    return this.sendToCustomer(args);
  }

  private async sendToCustomer(args: unknown): Promise<ToolResult> {
    const parsed = customerContent(args);
    if ("error" in parsed) return { ...parsed.error, done: this.done };
    this.agentMessage(parsed.content, []);
    const { messages } = await this.advance();
    const answer = messages.find((item) => item.role === "user")?.content ?? "";
    return { content: this.done ? `${answer}\n\n${CUSTOMER_LEFT}` : answer, isError: false, done: this.done };
  }

  /** tau2's termination reason; an agent-model failure is tau2's infrastructure error, a harness turn limit its `max_steps`. */
  termination(endedBy: HarnessTermination): TerminationReason {
    if (this.ending) return this.ending;
    return endedBy === "errored" ? "infrastructure_error" : "max_steps";
  }

  /**
   * tau2's evaluation of the conversation. Only a finished one is cached: a reward asked while the
   * conversation can still go on (`no_tool_call`: a trainer asking mid-episode) is provisional, marked so
   * and recomputed next time, so the final reward is always the evaluation of the whole conversation.
   */
  async reward({ endedBy }: { endedBy: HarnessTermination }): Promise<RewardBreakdown> {
    if (this.cached) return this.cached;
    const finished = this.done || endedBy !== "no_tool_call";
    const breakdown = await scoreEpisode(this.options, this.trajectory, this.termination(endedBy), { steps: this.steps, errors: this.errors });
    if (!finished) return { ...breakdown, diagnostics: { ...breakdown.diagnostics, provisional: 1 } };
    this.cached = breakdown;
    return breakdown;
  }

  /** Whether the conversation so far already meets the task's goal (what the scripted customer asks before it stops). */
  goalMet(): boolean {
    return goalHolds(this.options, this.trajectory);
  }

  /** The run's counts; tau2's message list too when no reward carries it (an errored run). */
  diagnostics(): Record<string, JsonValue> {
    return {
      tau2_task_id: this.options.task.id,
      steps: this.steps,
      tool_errors: this.errors,
      tau2_termination: this.ending ?? (this.cached ? "max_steps" : "infrastructure_error"),
      customer: this.options.customerTool ? "tool" : "message",
      ...(this.agentLeft ? { agent_left: true } : {}),
      ...(this.cached ? {} : { tau2_messages: tau2MessagesJson(this.trajectory) }),
    };
  }
}
