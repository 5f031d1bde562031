import {
  EnvConfigError,
  TRAJECTORY_SCHEMA_VERSION,
  toolError,
  type AnyEnvironment,
  type ArgumentValidator,
  type AssistantMessage,
  type Episode,
  type EpisodeContext,
  type EpisodeResponse,
  type ErrorRecord,
  type FormatError,
  type JsonValue,
  type Message,
  type RejectedCall,
  type RewardBreakdown,
  type StepRecord,
  type TerminationReason,
  type ToolMessage,
  type ToolResult,
  type Trajectory,
} from "../core/index.ts";
import { plainPythonJson } from "../python-semantics/index.ts";
import { callArguments, parseToolArguments } from "./parse-arguments.ts";

export interface EpisodeAddress {
  env: AnyEnvironment;
  split: string;
  seed: number;
  index: number;
  /** Parsed config. */
  config: unknown;
  /** Prebuilt task (skips generation); must equal `env.generate(...)` for the address. */
  task?: unknown;
  /** Defaults to the environment's own limit for the task. */
  maxTurns?: number;
  /**
   * Keep the message list and step records (default true). The server's sessions turn it off: the trainer
   * holds the conversation and nothing reads a session's transcript, and keeping every call's records made
   * them survive each young-generation GC, whose copying was the server's latency tail.
   */
  transcript?: boolean;
  /** Which trial of the task this is and the trial's seed (`toolgym eval --num-trials`), given to `env.start`. */
  context?: EpisodeContext;
}

/** What one executed tool call produced, as the model and the server's clients see it. */
export interface CallOutcome {
  content: string;
  isError: boolean;
  errorKind?: string;
  /** The episode has ended (this call or an earlier one). */
  done: boolean;
}

const AFTER_FINISH = JSON.stringify({ ok: false, error: "the episode has already finished; this call was not executed" });
const afterTurnLimit = (limit: number) => JSON.stringify({ ok: false, error: `the episode reached its limit of ${limit} turns; this call was not executed` });

/**
 * Longest format-error message the ledger keeps. Why: a message may quote what the model (or a client of
 * `toolgym serve`) sent, a 1 MiB tool name say, and the ledger lives as long as the episode (issue 36).
 */
export const MAX_FORMAT_ERROR_CHARACTERS = 1000;

/**
 * Format errors whose message the ledger keeps; later ones are counted with a fixed note instead. Why: a
 * server session may run any number of turns (`max_turns`), and each rejected call would keep its message
 * until the session closes (issue 36); evaluation episodes stay far below it.
 */
export const MAX_FORMAT_ERROR_MESSAGES = 256;
const MESSAGE_NOT_KEPT = `(message not kept: past the first ${MAX_FORMAT_ERROR_MESSAGES} format errors)`;

function clipped(error: FormatError): FormatError {
  if (error.message.length <= MAX_FORMAT_ERROR_CHARACTERS) return error;
  // A copy, not a slice: a slice of a long string may keep the whole string alive.
  return { kind: error.kind, message: `${Buffer.from(error.message.slice(0, MAX_FORMAT_ERROR_CHARACTERS)).toString()}…` };
}

const NO_VALIDATORS: ReadonlyMap<string, ArgumentValidator> = new Map();

/**
 * One episode's state and bookkeeping, shared by every way an episode is driven: `runEpisode` (an
 * agent in the loop) and the environment server's sessions (the trainer in the loop). Both execute
 * calls, count turns and format errors, end the episode and compute the reward here, so the reward
 * gets the same inputs whoever drives it. The driver owns tool calls: it parses the arguments, looks
 * the tool up, checks the arguments with the episode's validator and keeps the one format-error ledger;
 * the episode runs only calls that passed (unless its environment's argument policy is its own).
 */
export class EpisodeDriver {
  readonly env: AnyEnvironment;
  readonly address: Omit<EpisodeAddress, "env" | "task" | "maxTurns">;
  readonly episode: Episode;
  readonly maxTurns: number;
  readonly messages: Message[];
  readonly steps: StepRecord[] = [];
  readonly formatErrors: FormatError[] = [];
  readonly errors: ErrorRecord[] = [];
  readonly usage = { promptTokens: 0, completionTokens: 0 };
  turns = 0;
  private readonly transcript: boolean;
  private ended: TerminationReason | undefined;
  private readonly toolNames: Set<string>;
  /** The environment answers bad arguments itself (`argumentPolicy: "environment"`). */
  private readonly ownArguments: boolean;
  private readonly validators: ReadonlyMap<string, ArgumentValidator>;
  private toolList: string | undefined;

  constructor(address: EpisodeAddress) {
    const { env, split, seed, index, config } = address;
    this.env = env;
    this.address = { split, seed, index, config };
    const task = address.task ?? env.generate({ split, seed, index, config });
    this.episode = address.context ? env.start(task, address.context) : env.start(task);
    this.maxTurns = address.maxTurns ?? env.maxTurns(task);
    this.messages = [...this.episode.messages];
    this.transcript = address.transcript ?? true;
    this.toolNames = new Set(this.episode.tools.map((tool) => tool.function.name));
    this.ownArguments = env.argumentPolicy === "environment";
    this.validators = this.episode.validators ?? NO_VALIDATORS;
    if (!this.ownArguments && this.episode.protocol === "tools" && !this.episode.validators && this.episode.tools.length > 0)
      throw new EnvConfigError({
        code: "ENV_TOOLS_UNCHECKED",
        message: `${env.id}: its episodes offer tools but no argument validators; give them validators (createToolbox) or declare argumentPolicy "environment"`,
      });
  }

  /** True once the environment says the episode is over or the driver ended it. */
  get done(): boolean {
    return this.ended !== undefined || this.episode.done;
  }

  /** How the episode ended so far: an explicit end, else the environment's state, else the turn limit. */
  get termination(): TerminationReason {
    if (this.ended) return this.ended;
    if (this.episode.done) return this.episode.truncated ? "truncated" : "finished";
    return "max_turns";
  }

  /** Starts the next agent turn; false when the turn limit or the episode's end leaves none. */
  beginTurn(): boolean {
    if (this.done || this.turns >= this.maxTurns) return false;
    this.turns++;
    return true;
  }

  /** Records the assistant's message and the format problems its parser found. */
  recordAssistant(message: AssistantMessage, formatErrors: readonly FormatError[] = []): void {
    this.messages.push(message);
    for (const error of formatErrors) this.note(error);
  }

  /** Adds a format error to the ledger, its message clipped (MAX_FORMAT_ERROR_CHARACTERS) or, past MAX_FORMAT_ERROR_MESSAGES, not kept. */
  private note(error: FormatError): void {
    this.formatErrors.push(this.formatErrors.length < MAX_FORMAT_ERROR_MESSAGES ? clipped(error) : { kind: error.kind, message: MESSAGE_NOT_KEPT });
  }

  /** Ends the episode for a reason the environment cannot know (an agent that stopped, a provider failure). */
  end(reason: TerminationReason, error?: ErrorRecord): void {
    this.ended ??= reason;
    if (error) this.errors.push(error);
  }

  /**
   * Executes one tool call whose arguments are raw model text (a JSON string) or an already parsed
   * object, appends the tool message and returns what the model reads next.
   */
  call(call: { id?: string; name: string; arguments: unknown }): CallOutcome {
    const name = call.name;
    let outcome: CallOutcome;
    let argumentsValue: JsonValue;
    const parsed = callArguments(call.arguments, { python: this.ownArguments });
    if (this.done) {
      outcome =
        this.termination === "max_turns"
          ? { content: afterTurnLimit(this.maxTurns), isError: true, errorKind: "after_turn_limit", done: true }
          : { content: AFTER_FINISH, isError: true, errorKind: "after_finish", done: true };
      argumentsValue = parsed.ok ? parsed.value : String(call.arguments ?? "");
    } else if (!parsed.ok) {
      this.note({ kind: "invalid_json_arguments", message: parsed.message });
      const content = JSON.stringify({ ok: false, error: `${parsed.message}. Send the arguments as one JSON object matching the tool's schema.` });
      outcome = { content, isError: true, errorKind: "invalid_json_arguments", done: false };
      argumentsValue = String(call.arguments ?? "");
    } else {
      // The environment gets Python's types; the step record gets their plain JSON view.
      argumentsValue = this.ownArguments ? (plainPythonJson(parsed.value) as JsonValue) : parsed.value;
      outcome = this.outcome(this.execute(name, parsed.value));
    }
    return this.recordCall(call, argumentsValue, outcome);
  }

  /** Looks the tool up and checks the arguments (the driver's policy), then runs the call or answers the refusal. */
  private execute(name: string, args: unknown): ToolResult {
    if (this.ownArguments) {
      if (!this.toolNames.has(name)) this.note({ kind: "unknown_tool", message: `unknown tool '${name}'` });
      return this.answered(this.episode.call(name, args));
    }
    const validator = this.validators.get(name);
    if (validator === undefined) {
      this.toolList ??= this.episode.tools.map((tool) => tool.function.name).join(", ");
      return this.refuse({ errorKind: "unknown_tool", message: `unknown tool '${name}'; available tools: ${this.toolList}`, name, args });
    }
    const checked = validator(args);
    if (!checked.ok) return this.refuse({ errorKind: "invalid_arguments", message: checked.message, name, args });
    return this.answered(this.episode.call(name, checked.value));
  }

  /** A call refused before the episode ran it: one format error, the episode's own answer if it has one. */
  private refuse(call: RejectedCall): ToolResult {
    this.note({ kind: call.errorKind, message: call.message });
    return this.episode.rejected?.(call) ?? toolError(call.errorKind, call.message);
  }

  /** An environment that finds arguments invalid only with its state (a rule across two of them) says so with the error kind. */
  private answered(result: ToolResult): ToolResult {
    if (result.isError && result.errorKind === "invalid_arguments") this.note({ kind: "invalid_arguments", message: result.content });
    return result;
  }

  /**
   * A call the episode answers asynchronously (`Episode.callAsync`: a simulated user's reply), with the
   * bookkeeping of `call`; undefined for every call `call` runs (a refused one included).
   */
  callAsync(call: { id?: string; name: string; arguments: unknown }): Promise<CallOutcome> | undefined {
    if (!this.episode.callAsync || this.done) return undefined;
    const parsed = callArguments(call.arguments, { python: this.ownArguments });
    if (!parsed.ok) return undefined;
    let args: unknown = parsed.value;
    if (!this.ownArguments) {
      const checked = this.validators.get(call.name)?.(args);
      if (!checked?.ok) return undefined;
      args = checked.value;
    }
    const pending = this.episode.callAsync(call.name, args);
    const recorded = this.ownArguments ? (plainPythonJson(parsed.value) as JsonValue) : parsed.value;
    return pending?.then((result) => this.recordCall(call, recorded, this.outcome(this.answered(result))));
  }

  private outcome(result: ToolResult): CallOutcome {
    return { content: result.content, isError: result.isError, ...(result.errorKind ? { errorKind: result.errorKind } : {}), done: this.done };
  }

  private recordCall(call: { id?: string; name: string }, argumentsValue: JsonValue, outcome: CallOutcome): CallOutcome {
    const name = call.name;
    if (!this.transcript) return outcome;
    this.steps.push({
      turn: this.turns,
      name,
      arguments: argumentsValue,
      result: outcome.content,
      isError: outcome.isError,
      ...(outcome.errorKind ? { errorKind: outcome.errorKind } : {}),
    });
    const toolMessage: ToolMessage = { role: "tool", tool_call_id: call.id ?? `call_${this.turns}_${this.steps.length}`, name, content: outcome.content };
    this.messages.push(toolMessage);
    return outcome;
  }

  /**
   * Hands a plain-text reply to the environment (a text-protocol action, or a message to a simulated
   * user); its answer becomes the next user message. Returns undefined when the environment takes no
   * text replies (the caller then nudges the agent towards a tool call).
   */
  async reply(text: string): Promise<ToolResult | undefined> {
    if (!this.episode.reply || (this.episode.protocol === "tools" && !this.episode.conversational)) return undefined;
    const result = await this.episode.reply(text);
    if (result.isError && result.errorKind) this.note({ kind: "invalid_action", message: result.content });
    if (!this.transcript) return result;
    this.steps.push({
      turn: this.turns,
      name: "reply",
      arguments: text,
      result: result.content,
      isError: result.isError,
      ...(result.errorKind ? { errorKind: result.errorKind } : {}),
    });
    if (!result.done || result.content !== "") this.messages.push({ role: "user", content: result.content });
    return result;
  }

  /**
   * Hands the agent's whole message to an environment that routes messages whole (`Episode.respond`),
   * appends what comes back and records one step per tool call, or one `reply` step for a text message.
   */
  async respond(message: AssistantMessage): Promise<EpisodeResponse> {
    const respond = this.episode.respond?.bind(this.episode);
    if (!respond) throw new Error(`${this.env.id} episodes take no whole messages`);
    const response = await respond(message);
    if (!this.transcript) return response;
    const calls = message.tool_calls ?? [];
    calls.forEach((call, position) => {
      const answer = response.messages.find((item) => item.role === "tool" && item.tool_call_id === call.id);
      const parsed = parseToolArguments(call.function?.arguments);
      const isError = response.toolErrors[position] ?? false;
      this.steps.push({
        turn: this.turns,
        name: call.function?.name ?? "",
        arguments: parsed.ok ? parsed.value : String(call.function?.arguments ?? ""),
        result: answer?.content ?? "",
        isError,
        ...(isError ? { errorKind: "tool_error" } : {}),
      });
    });
    if (calls.length === 0) {
      const reply = response.messages.find((item) => item.role === "user");
      this.steps.push({ turn: this.turns, name: "reply", arguments: message.content ?? "", result: reply?.content ?? "", isError: false });
    }
    this.messages.push(...response.messages);
    return response;
  }

  /** The reward as the episode stands; null for an errored episode (excluded from means, never a 0). */
  async reward(endedBy: TerminationReason = this.termination): Promise<RewardBreakdown | null> {
    if (endedBy === "errored") return null;
    return this.episode.reward({ turnsUsed: this.turns, maxTurns: this.maxTurns, endedBy, formatErrors: this.formatErrors.length });
  }

  /** The whole episode in the run format's trajectory shape. */
  async trajectory(options: { agentId: string; id?: string }): Promise<Trajectory> {
    const termination = this.termination;
    const reward = await this.reward(termination);
    const byKind: Record<string, number> = {};
    for (const error of this.formatErrors) byKind[error.kind] = (byKind[error.kind] ?? 0) + 1;
    const { split, seed, index, config } = this.address;
    return {
      schemaVersion: TRAJECTORY_SCHEMA_VERSION,
      id: options.id ?? `${this.env.id}/${split}/${seed}/${index}`,
      env: { id: this.env.id, version: this.env.version, split, seed, index, config: config as JsonValue },
      agent: { id: options.agentId },
      messages: this.messages,
      steps: this.steps,
      turns: this.turns,
      maxTurns: this.maxTurns,
      termination,
      reward,
      formatErrors: { count: this.formatErrors.length, byKind, list: this.formatErrors },
      errors: this.errors,
      usage: this.usage,
      diagnostics: this.episode.diagnostics ? this.episode.diagnostics({ formatErrors: this.formatErrors.length }) : {},
    };
  }
}
