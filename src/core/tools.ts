import type { JsonObject } from "./messages.ts";

/** JSON Schema object for tool parameters (OpenAI function-calling format). */
export type JsonSchema = JsonObject;

/** A tool as the model sees it: OpenAI's `{type: "function", function: {...}}` shape. */
export interface ToolSpec {
  type: "function";
  function: { name: string; description: string; parameters: JsonSchema };
}

export type ToolKind = "read" | "write" | "think" | "finish";

/** The outcome of one tool call (or one text reply in text-protocol environments). */
export interface ToolResult {
  /** What the model reads next: a JSON string for tool environments, plain text for text ones. */
  content: string;
  isError: boolean;
  /** Stable error kind when `isError` (e.g. `unknown_tool`, `invalid_arguments`, `unknown_id`). */
  errorKind?: string;
  /** True when this call ended the episode (e.g. `finish`). */
  done: boolean;
}

/** What checking one call's arguments gives: the arguments typed as the tool takes them, or what is wrong, in a sentence for the model. */
export type ArgumentCheck = { ok: true; value: unknown } | { ok: false; message: string };

/** One tool's argument check, made once per tool (a zod schema's `safeParse`, or a hand-written check where the bench shows it pays). */
export type ArgumentValidator = (args: unknown) => ArgumentCheck;

/** A call the episode driver refused before the episode saw it: an unknown tool, or arguments its validator rejected. */
export interface RejectedCall {
  errorKind: "unknown_tool" | "invalid_arguments";
  /** The readable sentence the driver answers the model with (unless the episode answers in its own words). */
  message: string;
  name: string;
  args: unknown;
}

export function defineTool(spec: { name: string; description: string; parameters: JsonSchema }): ToolSpec {
  return { type: "function", function: { name: spec.name, description: spec.description, parameters: spec.parameters } };
}

export function toolResult(value: unknown, options: { done?: boolean } = {}): ToolResult {
  return { content: JSON.stringify(value), isError: false, done: options.done ?? false };
}

export function toolError(errorKind: string, message: string, extra: Record<string, unknown> = {}): ToolResult {
  return { content: JSON.stringify({ ok: false, error: message, ...extra }), isError: true, errorKind, done: false };
}
