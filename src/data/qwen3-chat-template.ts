/**
 * A direct rendering of the Qwen3 chat template (assets/qwen3/chat_template.jinja), used by ChatTemplate
 * when a model's template is exactly that one. The jinja interpreter allocates a runtime value for every
 * intermediate result and was about half of `toolgym sft`'s CPU time; this walks the same branches in plain
 * string operations and gives the same text. It only takes the shapes SFT rows have (string roles and
 * contents, tool calls `{name, arguments: string}`); for anything else it returns undefined and the caller
 * renders with jinja, so its output never depends on how it treats unusual values.
 * Equality with the jinja rendering is tested on every row of the synthetic Tau2 set (test/chat-template-qwen3.test.ts).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pythonStrip } from "../python-semantics/index.ts";

const qwen3TemplatePath = join(import.meta.dirname, "../../assets/qwen3/chat_template.jinja");

/** The template text as parsed (one trailing newline is dropped when a template is loaded). */
function parsedText(source: string): string {
  return source.endsWith("\n") ? source.slice(0, -1) : source;
}

let qwen3Source: string | undefined | null = null;

/** True when `source` is the Qwen3 template this module renders. */
export function isQwen3Template(source: string): boolean {
  if (qwen3Source === null) qwen3Source = existsSync(qwen3TemplatePath) ? parsedText(readFileSync(qwen3TemplatePath, "utf8")) : undefined;
  return qwen3Source !== undefined && parsedText(source) === qwen3Source;
}

interface Message {
  role: string;
  content: string;
  reasoning_content?: string | null;
  tool_calls?: { name: string; arguments: string }[] | null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

function isToolCall(value: unknown): boolean {
  return isPlainObject(value) && typeof value.name === "string" && typeof value.arguments === "string" && !("function" in value);
}

/** The shapes the direct rendering takes; anything else goes to jinja. */
function isSimpleMessage(value: unknown): value is Message {
  if (!isPlainObject(value) || typeof value.role !== "string" || typeof value.content !== "string") return false;
  const reasoning = value.reasoning_content;
  if (reasoning !== undefined && reasoning !== null && typeof reasoning !== "string") return false;
  const calls = value.tool_calls;
  return calls === undefined || calls === null || (Array.isArray(calls) && calls.every(isToolCall));
}

export interface Qwen3RenderInput {
  messages: readonly unknown[];
  /** Tool schemas, each already serialised as the template's `tool | tojson` gives it. */
  toolJson: string[];
  addGenerationPrompt: boolean;
  /** The template's `enable_thinking` variable; undefined when not passed. */
  enableThinking: unknown;
}

const toolsPreamble =
  "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>";
const toolsPostamble =
  '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';

/** Index of the last real user query (not a tool response), as the template's reverse scan finds it. */
function lastQueryIndex(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index--) {
    const { role, content } = messages[index]!;
    if (role === "user" && !(content.startsWith("<tool_response>") && content.endsWith("</tool_response>"))) return index;
  }
  return messages.length - 1;
}

function renderAssistant(message: Message, index: number, last: boolean, lastQuery: number): string {
  let content = message.content;
  let reasoning = "";
  if (typeof message.reasoning_content === "string") reasoning = message.reasoning_content;
  else if (content.includes("</think>")) {
    reasoning = pythonStrip(pythonStrip(content.split("</think>")[0]!, "right", "\n").split("<think>").at(-1)!, "left", "\n");
    content = pythonStrip(content.split("</think>").at(-1)!, "left", "\n");
  }
  let text: string;
  if (index > lastQuery && (last || reasoning !== ""))
    text = `<|im_start|>${message.role}\n<think>\n${pythonStrip(reasoning, "both", "\n")}\n</think>\n\n${pythonStrip(content, "left", "\n")}`;
  else text = `<|im_start|>${message.role}\n${content}`;
  const calls = message.tool_calls ?? [];
  for (let call = 0; call < calls.length; call++) {
    if (call > 0 || content !== "") text += "\n";
    text += `<tool_call>\n{"name": "${calls[call]!.name}", "arguments": ${calls[call]!.arguments}}\n</tool_call>`;
  }
  return `${text}<|im_end|>\n`;
}

/** The Qwen3 template's output, or undefined when the input has a shape left to jinja. */
export function renderQwen3(input: Qwen3RenderInput): string | undefined {
  const { messages } = input;
  if (messages.length === 0 || !messages.every(isSimpleMessage)) return undefined;
  const typed = messages as readonly Message[];
  const first = typed[0]!;
  let text = "";
  if (input.toolJson.length > 0) {
    text += "<|im_start|>system\n";
    if (first.role === "system") text += `${first.content}\n\n`;
    text += toolsPreamble;
    for (const tool of input.toolJson) text += `\n${tool}`;
    text += toolsPostamble;
  } else if (first.role === "system") text += `<|im_start|>system\n${first.content}<|im_end|>\n`;
  const lastQuery = lastQueryIndex(typed);
  for (let index = 0; index < typed.length; index++) {
    const message = typed[index]!;
    const last = index === typed.length - 1;
    if (message.role === "user" || (message.role === "system" && index > 0)) text += `<|im_start|>${message.role}\n${message.content}<|im_end|>\n`;
    else if (message.role === "assistant") text += renderAssistant(message, index, last, lastQuery);
    else if (message.role === "tool") {
      if (index === 0 || typed[index - 1]!.role !== "tool") text += "<|im_start|>user";
      text += `\n<tool_response>\n${message.content}\n</tool_response>`;
      if (last || typed[index + 1]!.role !== "tool") text += "<|im_end|>\n";
    }
  }
  if (input.addGenerationPrompt) {
    text += "<|im_start|>assistant\n";
    if (input.enableThinking === false) text += "<think>\n\n</think>\n\n";
  }
  return text;
}
