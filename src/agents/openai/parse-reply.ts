import type { AgentTurn, AssistantMessage, FormatError, Protocol, ToolCall } from "../../core/index.ts";

/** The parts of a chat-completions response the agent reads (vLLM, transformers serve, SGLang, llama.cpp, OpenAI). */
export interface ChatCompletionLike {
  choices?: Array<{
    finish_reason?: string | null;
    message?: {
      content?: string | null;
      reasoning?: string | null;
      reasoning_content?: string | null;
      tool_calls?: Array<{ id?: string; type?: string; function?: { name?: string; arguments?: unknown } }> | null;
    } | null;
  }> | null;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

const TOOL_CALL_BLOCK = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;

/**
 * Hermes-style tool calls left in `content` (the server's parser failed or is not enabled):
 * `<tool_call>{"name": …, "arguments": {…}}</tool_call>`. Returns the recovered calls, the text outside
 * the blocks and the blocks that could not be parsed.
 */
export function recoverHermesToolCalls(content: string, idPrefix: string): { calls: ToolCall[]; rest: string; failures: string[] } {
  const calls: ToolCall[] = [];
  const failures: string[] = [];
  for (const match of content.matchAll(TOOL_CALL_BLOCK)) {
    const body = (match[1] ?? "").trim();
    try {
      const parsed = JSON.parse(body) as { name?: unknown; arguments?: unknown; parameters?: unknown };
      const args = parsed.arguments ?? parsed.parameters ?? {};
      if (typeof parsed.name !== "string" || parsed.name === "") throw new Error('no "name" string');
      calls.push({
        id: `${idPrefix}_${calls.length}`,
        type: "function",
        function: { name: parsed.name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
      });
    } catch (error) {
      failures.push(`${(error as Error).message}: ${body.slice(0, 160)}`);
    }
  }
  return { calls, rest: content.replace(TOOL_CALL_BLOCK, "").trim(), failures };
}

/**
 * Turns one chat-completions response into an agent turn. Never throws: every malformed reply becomes
 * a FormatError whose message is readable feedback for the model.
 * - tools protocol: tool_calls (arguments kept as the JSON string; the rollout parses and validates them),
 *   hermes `<tool_call>` text recovered from content (counted as `unparsed_tool_call`) unless `recoverTextToolCalls`
 *   is false (tau2's `generate` keeps such text as text), truncation, empty reply;
 *   a reply without any tool call is left to the rollout loop, which counts `no_tool_call`.
 * - text protocol: the content is the action; truncation and empty replies are counted.
 */
export function parseChatCompletion(
  response: ChatCompletionLike,
  options: { protocol: Protocol; callIdPrefix: string; recoverTextToolCalls?: boolean },
): AgentTurn {
  const choice = response.choices?.[0];
  const raw = choice?.message ?? {};
  const finishReason = choice?.finish_reason ?? undefined;
  const reasoning = raw.reasoning ?? raw.reasoning_content ?? undefined;
  let content = typeof raw.content === "string" ? raw.content : null;
  const formatErrors: FormatError[] = [];
  const usage = response.usage ? { promptTokens: response.usage.prompt_tokens ?? 0, completionTokens: response.usage.completion_tokens ?? 0 } : undefined;
  const message: AssistantMessage = { role: "assistant", content };
  if (typeof reasoning === "string" && reasoning !== "") message.reasoning_content = reasoning;

  if (!choice) {
    formatErrors.push({ kind: "empty_response", message: "The server returned no choices. Reply again, calling one of the tools." });
    return { message: { role: "assistant", content: "" }, formatErrors, ...(usage ? { usage } : {}) };
  }

  let toolCalls: ToolCall[] = [];
  if (options.protocol === "tools") {
    toolCalls = (raw.tool_calls ?? []).map((call, position) => ({
      id: call.id && call.id !== "" ? call.id : `${options.callIdPrefix}_${position}`,
      type: "function" as const,
      function: {
        name: call.function?.name ?? "",
        arguments: typeof call.function?.arguments === "string" ? call.function.arguments : JSON.stringify(call.function?.arguments ?? {}),
      },
    }));
    // A reply cut off at the token limit is counted once, as `truncated`, even if it stopped inside a call.
    const recover = options.recoverTextToolCalls ?? true;
    if (recover && toolCalls.length === 0 && finishReason !== "length" && content !== null && content.includes("<tool_call>")) {
      const recovered = recoverHermesToolCalls(content, options.callIdPrefix);
      if (recovered.calls.length > 0) {
        toolCalls = recovered.calls;
        content = recovered.rest;
        message.content = content;
        formatErrors.push({
          kind: "unparsed_tool_call",
          message: `The server did not parse your <tool_call> text; recovered ${recovered.calls.length} call(s) from it.`,
        });
      }
      if (recovered.failures.length > 0) {
        formatErrors.push({
          kind: "unparsed_tool_call",
          message: `Your <tool_call> block could not be parsed (${recovered.failures.join("; ")}). Write each call as <tool_call>{"name": "TOOL", "arguments": {...}}</tool_call> with valid JSON.`,
        });
      }
    }
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
  }

  const hasText = content !== null && content.trim() !== "";
  if (finishReason === "length" && toolCalls.length === 0) {
    formatErrors.push({ kind: "truncated", message: "Your reply was cut off at the token limit before it was complete. Answer more briefly." });
  } else if (!hasText && toolCalls.length === 0 && !message.reasoning_content) {
    formatErrors.push({
      kind: "empty_response",
      message: options.protocol === "tools" ? "Your reply was empty. Call one of the tools." : "Your reply was empty. Reply with an action.",
    });
  }
  return { message, ...(formatErrors.length > 0 ? { formatErrors } : {}), ...(finishReason ? { finishReason } : {}), ...(usage ? { usage } : {}) };
}
