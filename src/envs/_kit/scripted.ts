import type { Agent, AgentRequest, AgentTurn, AssistantMessage, Message, ToolCall } from "../../core/index.ts";

/** A tool call the scripted agent wants to make; `rawArguments` sends malformed JSON on purpose. */
export interface PlannedCall {
  name: string;
  arguments?: Record<string, unknown>;
  rawArguments?: string;
}

export type ScriptedDecision = { calls: PlannedCall[] } | { text: string };

/**
 * Wraps a decision function `(messages) → calls or text` as an Agent. Tool-call ids are deterministic
 * (`call_<turn>_<n>`), so trajectories are byte-identical across processes.
 */
export function createScriptedAgent(id: string, decide: (context: { messages: Message[]; turn: number; request: AgentRequest }) => ScriptedDecision): Agent {
  let turn = 0;
  return {
    id,
    async act(request: AgentRequest): Promise<AgentTurn> {
      turn++;
      const decision = decide({ messages: request.messages, turn, request });
      if ("text" in decision) return { message: { role: "assistant", content: decision.text } };
      const toolCalls: ToolCall[] = decision.calls.map((call, position) => ({
        id: `call_${turn}_${position}`,
        type: "function",
        function: { name: call.name, arguments: call.rawArguments ?? JSON.stringify(call.arguments ?? {}) },
      }));
      const message: AssistantMessage = { role: "assistant", content: "", tool_calls: toolCalls };
      return { message };
    },
  };
}

/** The parsed JSON results of the tool messages in a conversation, in order. */
export function toolResults(messages: Message[]): unknown[] {
  const results: unknown[] = [];
  for (const message of messages) {
    if (message.role !== "tool") continue;
    try {
      results.push(JSON.parse(message.content));
    } catch {
      results.push(message.content);
    }
  }
  return results;
}

/** The last tool result in a conversation, parsed. */
export function lastToolResult(messages: Message[]): unknown {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as Message;
    if (message.role === "tool") {
      try {
        return JSON.parse(message.content);
      } catch {
        return message.content;
      }
    }
  }
  return undefined;
}

export type { ScriptedPolicy } from "../../core/index.ts";
