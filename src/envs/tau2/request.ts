import type { Message } from "../../core/index.ts";
import { parsePythonJson, pythonJsonDumps } from "../../python-semantics/index.ts";

/**
 * The agent's messages as tau2's `to_litellm_messages` (utils/llm_utils.py) builds them for every request:
 * user and system messages as role and content; an assistant message as role, content and `tool_calls`
 * (null without calls; each call with `id`, `name`, `function` {name, arguments: `json.dumps` of the parsed
 * arguments} and `type`), never its reasoning; a tool message as role, content and `tool_call_id`, no name.
 * Each message's view is built once (kept by message object), so the request body's per-message cache holds.
 */
const views = new WeakMap<Message, Message>();

function dumpsArguments(text: string): string {
  try {
    return pythonJsonDumps(parsePythonJson(text === "" ? "{}" : text), { ensureAscii: true });
  } catch {
    return text; // tau2 would have raised on it in `generate`; the episode records that failure itself
  }
}

function viewOf(message: Message): Message {
  if (message.role === "assistant") {
    const calls = message.tool_calls?.length
      ? message.tool_calls.map((call) => ({
          id: call.id,
          name: call.function.name,
          function: { name: call.function.name, arguments: dumpsArguments(call.function.arguments) },
          type: "function" as const,
        }))
      : null;
    return { role: "assistant", content: message.content, tool_calls: calls } as unknown as Message;
  }
  if (message.role === "tool") return { role: "tool", content: message.content, tool_call_id: message.tool_call_id };
  return { role: message.role, content: message.content } as Message;
}

export function tau2RequestMessages(messages: readonly Message[]): Message[] {
  return messages.map((message) => {
    let view = views.get(message);
    if (!view) {
      view = viewOf(message);
      views.set(message, view);
    }
    return view;
  });
}
