import type { Message, ToolSpec } from "../../core/index.ts";
import { chatModel, complete, type ModelAddress } from "./llm.ts";
import { STOP, userSystemPrompt } from "./prompts.ts";
import type { Tau2Task } from "./types.ts";

/** The simulated customer. It reads the agent's messages and answers with text or with its own tool calls. */
export interface UserCall {
  name: string;
  arguments: Record<string, unknown>;
}

export type UserMove = { text: string } | { calls: UserCall[]; text?: string | null };

export interface UserSimulator {
  /** The next move after the agent said `agentText` (or after the user's own tool results). */
  respond(event: { agentText: string } | { toolResults: { call: UserCall; content: string }[] }): Promise<UserMove>;
}

/**
 * tau2's LLM user: its system prompt from the guidelines and the scenario; it sees the agent's messages
 * as `user` turns and its own as `assistant` turns (tau2 flips the roles), plus its own tool calls.
 */
export function createLlmUser(options: {
  address: ModelAddress;
  task: Tau2Task;
  tools: ToolSpec[];
  episodeKey: string;
  maxTokens?: number | null;
}): UserSimulator {
  const model = chatModel(options.address, `user:${options.episodeKey}`, options.maxTokens ? { maxTokens: options.maxTokens } : {});
  const messages: Message[] = [{ role: "system", content: userSystemPrompt(options.task, options.tools.length > 0) }];
  let pendingIds: string[] = [];
  return {
    async respond(event) {
      if ("agentText" in event) messages.push({ role: "user", content: event.agentText });
      else
        event.toolResults.forEach((result, position) =>
          messages.push({ role: "tool", tool_call_id: pendingIds[position] ?? `user_call_${position}`, content: result.content }),
        );
      const reply = await complete(model, messages, options.tools);
      messages.push(reply);
      const calls = (reply.tool_calls ?? []).map((call) => ({ name: call.function.name, arguments: parseArguments(call.function.arguments) }));
      pendingIds = (reply.tool_calls ?? []).map((call) => call.id);
      if (calls.length > 0) return { calls, text: reply.content };
      return { text: reply.content ?? "" };
    },
  };
}

function parseArguments(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text || "{}");
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/**
 * A deterministic user for tests and scripted audits: states the scenario, performs the user-side gold
 * actions the agent names, confirms everything else, and stops when the agent asks whether anything else
 * is needed.
 */
export function createScriptedUser(task: Tau2Task, options: { maxReplies?: number } = {}): UserSimulator {
  const pending = (task.evaluation_criteria?.actions ?? []).filter((action) => action.requestor === "user");
  let replies = 0;
  const maxReplies = options.maxReplies ?? 30;
  return {
    async respond(event) {
      if ("toolResults" in event) return { text: `Done: ${event.toolResults.map((result) => result.content).join(" | ")}` };
      replies++;
      const text = event.agentText;
      if (replies === 1) return { text: openingRequest(task) };
      const next = pending[0];
      if (next && text.includes(next.name)) {
        pending.shift();
        return { calls: [{ name: next.name, arguments: next.arguments }] };
      }
      if (/anything else/i.test(text) || replies >= maxReplies) return { text: `No, that's all. Thank you! ${STOP}` };
      return { text: "Yes, please go ahead." };
    },
  };
}

/** The scripted user's first message: the reason for the call and what the user knows. */
export function openingRequest(task: Tau2Task): string {
  const instructions = task.user_scenario.instructions;
  if (typeof instructions === "string") return task.ticket ?? instructions;
  return [instructions.reason_for_call, instructions.known_info].filter(Boolean).join(" ");
}
