import type { AssistantMessage, Message } from "./messages.ts";
import type { Protocol } from "./environment.ts";
import type { ToolSpec } from "./tools.ts";

export interface AgentRequest {
  messages: Message[];
  tools: ToolSpec[];
  protocol: Protocol;
  signal?: AbortSignal;
}

/** A way the model's output was malformed; counted in the trajectory and fed back to the model. */
export interface FormatError {
  kind:
    "no_tool_call" | "unparsed_tool_call" | "invalid_json_arguments" | "unknown_tool" | "truncated" | "empty_response" | "invalid_arguments" | "invalid_action";
  message: string;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface AgentTurn {
  message: AssistantMessage;
  /** Format problems the agent itself detected while parsing the reply. */
  formatErrors?: FormatError[];
  finishReason?: string;
  usage?: TokenUsage;
}

/** Anything that produces the next assistant message: a model over HTTP, a scripted policy. */
export interface Agent {
  readonly id: string;
  act(request: AgentRequest): Promise<AgentTurn>;
}
