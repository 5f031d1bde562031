import { ToolInputError, type Message, type ToolSpec } from "../../core/index.ts";
import { parsePythonJson } from "../../python-semantics/index.ts";
import { tau2RequestMessages } from "./request.ts";
import { chatModel, complete, type ModelAddress } from "./llm.ts";
import { userSystemPrompt } from "./prompts.ts";
import type { Tau2Message, Tau2Task } from "./types.ts";

/** The simulated customer. It reads the agent's messages and answers with text or with its own tool calls. */
export interface UserCall {
  /** The model's tool-call id (tau2 keeps it as the ToolCall's id); absent for scripted users. */
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** One user message: text, tool calls, or both (tau2 routes a message with tool calls to the tools). */
export interface UserMove {
  text: string | null;
  calls: UserCall[];
  usage?: { completion_tokens: number; prompt_tokens: number } | null;
}

export interface UserSimulator {
  /** The next message after the agent said `agentText`, or after the results of the user's own tool calls. */
  respond(event: { agentText: string } | { toolResults: { call: UserCall; content: string }[] }): Promise<UserMove>;
}

/**
 * The messages of a task's history the user simulator starts from, as tau2's `flip_roles` gives them to
 * its model: the user's messages become `assistant` turns, the agent's text messages `user` turns, and
 * only the results of the user's own tool calls are kept. A last message addressed to the user (the
 * agent's, or the result of the user's own call) is left out: it arrives as the user's first input.
 */
export function userHistory(history: readonly Tau2Message[]): Message[] {
  const last = history.at(-1);
  const toUser = last !== undefined && (last.role === "assistant" || (last.role === "tool" && last.requestor === "user"));
  const messages: Message[] = [];
  for (const message of toUser ? history.slice(0, -1) : history) {
    if (message.role === "user") {
      const calls = (message.tool_calls ?? []).map((call) => ({
        id: call.id ?? "",
        type: "function" as const,
        function: { name: call.name, arguments: JSON.stringify(call.arguments) },
      }));
      messages.push({ role: "assistant", content: message.content ?? null, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
    } else if (message.role === "assistant" && !message.tool_calls) {
      messages.push({ role: "user", content: message.content ?? "" });
    } else if (message.role === "tool" && message.requestor === "user") {
      messages.push({ role: "tool", tool_call_id: message.id ?? "", content: message.content ?? "" });
    }
  }
  return messages;
}

/**
 * tau2's LLM user: its system prompt from the guidelines and the scenario; it sees the agent's messages
 * as `user` turns and its own as `assistant` turns (tau2 flips the roles), plus its own tool calls. It
 * sends what tau2's `generate` sends: temperature 0 and, per trial, the trial's seed.
 */
export function createLlmUser(options: {
  address: ModelAddress;
  task: Tau2Task;
  tools: ToolSpec[];
  episodeKey: string;
  history?: readonly Tau2Message[];
  seed?: number | null;
  maxTokens?: number | null;
  chatTemplateKwargs?: Record<string, unknown> | null;
  /** Aborts the request in flight when the episode closes (a server's session deleted or expired). */
  signal?: AbortSignal;
}): UserSimulator {
  const model = chatModel(options.address, `user:${options.episodeKey}`, {
    ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
    ...(options.seed !== undefined && options.seed !== null ? { seed: options.seed } : {}),
    ...(options.chatTemplateKwargs ? { chatTemplateKwargs: options.chatTemplateKwargs } : {}),
  });
  const messages: Message[] = [{ role: "system", content: userSystemPrompt(options.task, options.tools.length > 0) }, ...userHistory(options.history ?? [])];
  let pendingIds: string[] = [];
  return {
    async respond(event) {
      if ("agentText" in event) messages.push({ role: "user", content: event.agentText });
      else
        event.toolResults.forEach((result, position) =>
          messages.push({ role: "tool", tool_call_id: pendingIds[position] ?? `user_call_${position}`, content: result.content }),
        );
      // The request's messages as tau2's `to_litellm_messages` builds them (its `generate` serves the user too).
      const turn = await complete(model, tau2RequestMessages(messages), options.tools, options.signal);
      const reply = turn.message;
      messages.push(reply);
      // tau2's generate runs json.loads on each call's arguments; text that is not JSON raises there.
      const calls = (reply.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, arguments: parseUserArguments(call.function.arguments) }));
      pendingIds = calls.map((call) => call.id);
      const usage = turn.usage ? { completion_tokens: turn.usage.completionTokens, prompt_tokens: turn.usage.promptTokens } : null;
      return { text: reply.content, calls, usage };
    },
  };
}

function parseUserArguments(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parsePythonJson(text);
  } catch (error) {
    throw new ToolInputError({
      code: "TAU2_USER_TOOL_CALL_INVALID",
      message: `the user model's tool-call arguments are not JSON (${(error as Error).message}); tau2's runner fails such a simulation (infrastructure_error)`,
    });
  }
  if (value instanceof Map) return Object.fromEntries(value);
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new ToolInputError({
      code: "TAU2_USER_TOOL_CALL_INVALID",
      message: "the user model's tool-call arguments are not a JSON object; tau2's runner fails such a simulation (infrastructure_error)",
    });
  return value as Record<string, unknown>;
}

export { createScriptedUser, openingRequest } from "./scripted-customer.ts";
