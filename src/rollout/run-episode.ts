import {
  ProviderError,
  TRAJECTORY_SCHEMA_VERSION,
  errorToRecord,
  type Agent,
  type AnyEnvironment,
  type FormatError,
  type JsonValue,
  type Message,
  type StepRecord,
  type TerminationReason,
  type ToolMessage,
  type Trajectory,
} from "../core/index.ts";
import { parseToolArguments } from "./parse-arguments.ts";

export interface RunEpisodeOptions {
  env: AnyEnvironment;
  split: string;
  seed: number;
  index: number;
  config: unknown;
  agent: Agent;
  /** Defaults to the environment's own limit for the task. */
  maxTurns?: number;
  /**
   * Tool protocol, assistant reply without a tool call: `nudge` (default) sends a user message asking
   * for a tool call and counts a format error; `end` ends the episode (TRL's tool loop behaviour).
   */
  onNoToolCall?: "nudge" | "end";
  /** Prebuilt task (skips generation); must equal `env.generate(...)` for the address. */
  task?: unknown;
  signal?: AbortSignal;
  /** Episode id; defaults to `env/split/seed/index`. */
  id?: string;
}

export const NO_TOOL_CALL_FEEDBACK = "Your reply contained no tool call. Continue by calling one of the tools; call `finish` when you are done.";

/**
 * The episode loop: agent turn → tool execution → results appended → repeat, until the environment is
 * done or the turn limit is reached. Agent-agnostic; provider failures that survive the agent's own
 * retries end the episode as `errored` (excluded from means, never scored as 0).
 */
export async function runEpisode(options: RunEpisodeOptions): Promise<Trajectory> {
  const { env, agent, split, seed, index, config } = options;
  const task = options.task ?? env.generate({ split, seed, index, config });
  const episode = env.start(task);
  const maxTurns = options.maxTurns ?? env.maxTurns(task);
  const messages: Message[] = [...episode.messages];
  const steps: StepRecord[] = [];
  const formatErrors: FormatError[] = [];
  const errors: Trajectory["errors"] = [];
  const usage = { promptTokens: 0, completionTokens: 0 };
  const toolNames = new Set(episode.tools.map((tool) => tool.function.name));
  let termination: TerminationReason = "max_turns";
  let turns = 0;

  while (turns < maxTurns && !episode.done) {
    turns++;
    let turn;
    try {
      turn = await agent.act({
        messages: episode.view ? episode.view(messages) : messages,
        tools: episode.tools,
        protocol: episode.protocol,
        signal: options.signal,
      });
    } catch (error) {
      errors.push(errorToRecord(error, ProviderError.isInstance(error) ? "provider" : "harness"));
      termination = "errored";
      break;
    }
    if (turn.usage) {
      usage.promptTokens += turn.usage.promptTokens;
      usage.completionTokens += turn.usage.completionTokens;
    }
    const message = turn.message;
    messages.push(message);
    const turnErrors = turn.formatErrors ?? [];
    formatErrors.push(...turnErrors);

    if (episode.protocol === "text") {
      const text = message.content ?? "";
      const result = episode.reply
        ? await episode.reply(text)
        : { content: "This environment takes tool calls.", isError: true, errorKind: "no_reply_handler", done: false };
      steps.push({
        turn: turns,
        name: "reply",
        arguments: text,
        result: result.content,
        isError: result.isError,
        ...(result.errorKind ? { errorKind: result.errorKind } : {}),
      });
      if (result.isError && result.errorKind) formatErrors.push({ kind: "invalid_action", message: result.content });
      if (!result.done || result.content !== "") messages.push({ role: "user", content: result.content });
      if (result.done) termination = "finished";
      continue;
    }

    const calls = message.tool_calls ?? [];
    if (calls.length === 0) {
      if (turnErrors.length === 0) formatErrors.push({ kind: "no_tool_call", message: NO_TOOL_CALL_FEEDBACK });
      if (options.onNoToolCall === "end") {
        termination = "no_tool_call";
        break;
      }
      const feedback = turnErrors.length > 0 ? turnErrors.map((error) => error.message).join("\n") : NO_TOOL_CALL_FEEDBACK;
      messages.push({ role: "user", content: feedback });
      continue;
    }
    for (const call of calls) {
      const name = call.function?.name ?? "";
      const parsed = parseToolArguments(call.function?.arguments);
      let resultText: string;
      let isError: boolean;
      let errorKind: string | undefined;
      let argumentsValue: JsonValue;
      if (episode.done) {
        resultText = JSON.stringify({ ok: false, error: "the episode has already finished; this call was not executed" });
        isError = true;
        errorKind = "after_finish";
        argumentsValue = parsed.ok ? parsed.value : (call.function?.arguments ?? "");
      } else if (!parsed.ok) {
        formatErrors.push({ kind: "invalid_json_arguments", message: parsed.message });
        resultText = JSON.stringify({ ok: false, error: `${parsed.message}. Send the arguments as one JSON object matching the tool's schema.` });
        isError = true;
        errorKind = "invalid_json_arguments";
        argumentsValue = call.function?.arguments ?? "";
      } else {
        argumentsValue = parsed.value;
        if (!toolNames.has(name)) formatErrors.push({ kind: "unknown_tool", message: `unknown tool '${name}'` });
        const result = episode.call(name, parsed.value);
        resultText = result.content;
        isError = result.isError;
        errorKind = result.errorKind;
        if (result.isError && result.errorKind === "invalid_arguments") formatErrors.push({ kind: "invalid_arguments", message: result.content });
      }
      steps.push({ turn: turns, name, arguments: argumentsValue, result: resultText, isError, ...(errorKind ? { errorKind } : {}) });
      const toolMessage: ToolMessage = { role: "tool", tool_call_id: call.id, name, content: resultText };
      messages.push(toolMessage);
    }
    if (episode.done) termination = "finished";
  }
  if (termination !== "errored" && termination !== "no_tool_call") {
    termination = episode.done ? "finished" : "max_turns";
  }

  const reward =
    termination === "errored" ? null : await episode.reward({ turnsUsed: turns, maxTurns, endedBy: termination, formatErrors: formatErrors.length });
  const byKind: Record<string, number> = {};
  for (const error of formatErrors) byKind[error.kind] = (byKind[error.kind] ?? 0) + 1;
  return {
    schemaVersion: TRAJECTORY_SCHEMA_VERSION,
    id: options.id ?? `${env.id}/${split}/${seed}/${index}`,
    env: { id: env.id, version: env.version, split, seed, index, config: config as JsonValue },
    agent: { id: agent.id },
    messages,
    steps,
    turns,
    maxTurns,
    termination,
    reward,
    formatErrors: { count: formatErrors.length, byKind, list: formatErrors },
    errors,
    usage,
    diagnostics: episode.diagnostics ? episode.diagnostics() : {},
  };
}
