import type { ToolResult, ToolSpec } from "../../core/index.ts";

/**
 * toolgym's customer-as-a-tool protocol (config `customer: "tool"`). TRL's `environment_factory` loop
 * continues only while a completion has tool calls, so a policy trained there cannot write plain messages
 * to tau2's user simulator: it reaches the customer through this tool instead, whose result is the
 * customer's reply. tau2's leaderboard protocol (`customer: "message"`, the default) routes plain
 * assistant messages to the user; both record the same tau2 conversation for the evaluator.
 */
export const CUSTOMER_TOOL = "send_message_to_user";

export type CustomerProtocol = "message" | "tool";

export const customerToolSpec: ToolSpec = {
  type: "function",
  function: {
    name: CUSTOMER_TOOL,
    description:
      "Send a message to the customer you are helping and get their reply. This is the only way to talk to the customer; " +
      "an answer without any tool call ends the conversation.",
    parameters: {
      type: "object",
      properties: { content: { type: "string", description: "The message to the customer." } },
      required: ["content"],
      additionalProperties: false,
    },
  },
};

/** What the policy reads once the conversation is over (the customer's stop, transfer or out-of-scope marker, or tau2's limits). */
export const CUSTOMER_LEFT = "[The conversation has ended.]";

/** The answer to a call made after the conversation ended: not run, so no tool or customer sees it. */
export const AFTER_END = "Error: the conversation has ended; this call was not executed.";

/** The content argument as the tool takes it, or the error the call gets (Python's TypeError texts, as for tau2's tools). */
export function customerContent(args: unknown): { content: string } | { error: Omit<ToolResult, "done"> } {
  const object = (args ?? {}) as Record<string, unknown>;
  const extra = Object.keys(object).filter((key) => key !== "content");
  const fail = (message: string): { error: Omit<ToolResult, "done"> } => ({
    error: { content: `Error: ${message}`, isError: true, errorKind: "invalid_arguments" },
  });
  if (extra.length > 0) return fail(`${CUSTOMER_TOOL}() got an unexpected keyword argument '${extra[0]}'`);
  if (!("content" in object)) return fail(`${CUSTOMER_TOOL}() missing 1 required positional argument: 'content'`);
  if (typeof object.content !== "string") return fail(`${CUSTOMER_TOOL}(): content must be a string`);
  if (object.content.trim() === "") return fail(`${CUSTOMER_TOOL}(): content is empty; write the message to the customer`);
  return { content: object.content };
}

/**
 * Why the environment server refuses a session under tau2's leaderboard protocol: the policy would
 * reach the user simulator only through plain messages, which TRL's tool loop cannot carry (its rollout
 * ends there), so every episode would score tau2's 0 for a conversation the user never finished.
 */
export function leaderboardProtocolRefusal(envId: string): string {
  return (
    `${envId} under tau2's leaderboard protocol (config customer "message") has no way to reach its user simulator through a trainer: ` +
    `the agent talks to the customer in plain messages, and TRL's tool loop ends a rollout at a message without tool calls, so every ` +
    `episode would score 0; create the session with config {"customer": "tool"} (the customer is then the tool ${CUSTOMER_TOOL}; ` +
    `\`toolgym dataset ${envId}\` writes such rows)`
  );
}
