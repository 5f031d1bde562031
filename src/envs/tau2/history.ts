import type { Message } from "../../core/index.ts";
import type { Tau2Message } from "./types.ts";

/** The history's messages as the agent sees them (tau2's `is_valid_agent_history_message`). */
export function historyForAgent(history: readonly Tau2Message[]): Message[] {
  const messages: Message[] = [];
  for (const message of history) {
    if (message.role === "assistant") {
      const calls = (message.tool_calls ?? []).map((call) => ({
        id: call.id ?? "",
        type: "function" as const,
        function: { name: call.name, arguments: JSON.stringify(call.arguments) },
      }));
      messages.push({ role: "assistant", content: message.content ?? null, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
    } else if (message.role === "user" && !message.tool_calls) {
      messages.push({ role: "user", content: message.content ?? "" });
    } else if (message.role === "tool" && (message.requestor ?? "assistant") === "assistant") {
      messages.push({ role: "tool", tool_call_id: message.id ?? "", content: message.content ?? "" });
    }
  }
  return messages;
}

/** A history message as tau2's message models read it: a tool message's requestor and error, a call's requestor. */
export function withModelDefaults(message: Tau2Message): Tau2Message {
  if (message.role === "tool") return { ...message, requestor: message.requestor ?? "assistant", error: message.error ?? false };
  if (!message.tool_calls) return message;
  return { ...message, tool_calls: message.tool_calls.map((call) => ({ ...call, id: call.id ?? "", requestor: call.requestor ?? "assistant" })) };
}
