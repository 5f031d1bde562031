/**
 * One line of a Tau2 SFT file (inclusionAI/AReaL-tau2-data `tau2_sft_train.jsonl` layout:
 * `{messages, answer, metadata}`) → a context + target ready for the chat template.
 *
 * By default this is exactly the Tau2 SFT recipe: `answer.thinking` becomes the target's
 * `reasoning_content`; a tool-call message without content gets `content: ""`; every text is kept
 * byte for byte (the chat template alone decides what to strip). Also:
 * - tool calls in every shape (OpenAI nested `{function: {name, arguments}}` or flat `{name, arguments}`,
 *   arguments as object or JSON string) become `{name, arguments: string}`; objects are serialised like the
 *   template's `tojson` (Python `json.dumps(..., ensure_ascii=False)`), strings are kept verbatim, so the
 *   render is the one the template gives the raw call;
 * - history reasoning is dropped (P5: tau2 and AReaL replay none at inference) unless `keepHistoryReasoning`;
 * - Telecom user-side tool-call messages and the tool results they requested are removed (P6, tau2's
 *   `is_valid_agent_history_message`: the agent never sees them);
 * - tool result content null → "", non-string → JSON text.
 *
 * `normalizeWhitespace` (opt-in, `--normalize-whitespace`) additionally strips the target's reasoning at
 * both ends and the leading whitespace of every assistant content (spec §3.3 items 1-2). That changes the
 * trained text, but rescues rows whose prefix property breaks at the prompt/target boundary (P4).
 */
import { PythonFloat, type PythonJsonValue, parsePythonJson, pythonJsonDumps, pythonStrip } from "../../python-semantics/index.ts";

export interface SftToolCall {
  name: string;
  arguments: string;
}

export interface SftMessage {
  role: string;
  content: unknown;
  reasoning_content?: string;
  tool_calls?: SftToolCall[];
}

export interface Tau2Example {
  context: SftMessage[];
  target: SftMessage;
  metadata: Record<string, unknown>;
  /** Tool schemas the template renders into the system turn (toolgym trajectories carry them; Tau2 lines do not). */
  tools?: unknown[];
}

/** A line that cannot become a row; `reason` is a stable key for the stats report. */
export class RowSkip extends Error {
  constructor(
    readonly reason: string,
    detail: string,
  ) {
    super(detail);
  }
}

export interface Tau2NormaliseOptions {
  onlyCorrect?: boolean;
  keepHistoryReasoning?: boolean;
  /** Strip target reasoning at both ends and assistant content on the left (not the seed's recipe). */
  normalizeWhitespace?: boolean;
}

type JsonObject = Record<string, PythonJsonValue>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof PythonFloat) && !(value instanceof Map);
}

function normaliseToolCall(raw: unknown, where: string): SftToolCall {
  if (!isObject(raw)) throw new RowSkip("invalid-record", `${where}: a tool call must be an object`);
  const source = isObject(raw.function) ? raw.function : raw;
  if (typeof source.name !== "string") throw new RowSkip("invalid-record", `${where}: a tool call has no string name`);
  const args = source.arguments;
  const text = typeof args === "string" ? args : args === undefined || args === null ? "{}" : pythonJsonDumps(args);
  return { name: source.name, arguments: text };
}

function toolCallsOf(message: JsonObject, where: string): SftToolCall[] {
  const calls = message.tool_calls;
  if (calls === undefined || calls === null) return [];
  if (!Array.isArray(calls)) throw new RowSkip("invalid-record", `${where}: tool_calls must be a list`);
  return calls.map((call) => normaliseToolCall(call, where));
}

function assistantContent(value: unknown, normalizeWhitespace: boolean): string {
  if (typeof value !== "string") return "";
  return normalizeWhitespace ? pythonStrip(value, "left") : value;
}

function reasoningOf(message: JsonObject, normalizeWhitespace: boolean): string | undefined {
  const reasoning = typeof message.reasoning_content === "string" ? message.reasoning_content : message.thinking;
  if (typeof reasoning !== "string") return undefined;
  return normalizeWhitespace ? pythonStrip(reasoning, "both") : reasoning;
}

function assistantMessage(message: JsonObject, keepReasoning: boolean, normalizeWhitespace: boolean, where: string): SftMessage {
  const normalised: SftMessage = { role: "assistant", content: assistantContent(message.content, normalizeWhitespace) };
  const reasoning = keepReasoning ? reasoningOf(message, normalizeWhitespace) : undefined;
  if (reasoning !== undefined) normalised.reasoning_content = reasoning;
  const calls = toolCallsOf(message, where);
  if (calls.length > 0) normalised.tool_calls = calls;
  return normalised;
}

/** The template's "last real user query" (Qwen3 template lines 17-24); -1 when there is none. */
export function lastQueryIndex(messages: readonly SftMessage[]): number {
  for (let index = messages.length - 1; index >= 0; index--) {
    const { role, content } = messages[index];
    if (role === "user" && typeof content === "string" && !(content.startsWith("<tool_response>") && content.endsWith("</tool_response>"))) return index;
  }
  return -1;
}

function isCorrect(metadata: Record<string, unknown>): boolean {
  const correct = metadata.correct;
  if (correct instanceof PythonFloat) return correct.value === 1;
  return correct === 1 || correct === true;
}

function normaliseHistory(messages: PythonJsonValue[], options: Tau2NormaliseOptions): SftMessage[] {
  const keepHistoryReasoning = options.keepHistoryReasoning ?? false;
  const normalizeWhitespace = options.normalizeWhitespace ?? false;
  const context: SftMessage[] = [];
  let pendingRequestor = "assistant";
  messages.forEach((raw, index) => {
    const where = `messages[${index}]`;
    if (!isObject(raw) || typeof raw.role !== "string") throw new RowSkip("invalid-record", `${where} must be an object with a string role`);
    const role = raw.role;
    if (role === "assistant") {
      const message = assistantMessage(raw, keepHistoryReasoning, normalizeWhitespace, where);
      if (message.tool_calls) pendingRequestor = "assistant";
      context.push(message);
    } else if (role === "user") {
      const userCalls = toolCallsOf(raw, where);
      if (userCalls.length > 0) {
        // tau2 hides a user message with tool calls from the agent entirely, text included
        pendingRequestor = "user";
        return;
      }
      context.push({ role, content: raw.content ?? null });
    } else if (role === "tool") {
      const requestor = typeof raw.requestor === "string" ? raw.requestor : pendingRequestor;
      if (requestor === "user") return;
      const content = raw.content;
      context.push({ role, content: typeof content === "string" ? content : content === undefined || content === null ? "" : pythonJsonDumps(content) });
    } else if (role === "system") {
      context.push({ role, content: raw.content ?? null });
    } else {
      throw new RowSkip("invalid-record", `${where} has unknown role ${JSON.stringify(role)}`);
    }
  });
  return context;
}

/** Parses and normalises one JSONL line; throws RowSkip with a stable reason when it cannot be used. */
export function normaliseTau2Line(line: string, options: Tau2NormaliseOptions = {}): Tau2Example {
  let record: PythonJsonValue;
  try {
    record = parsePythonJson(line);
  } catch (error) {
    throw new RowSkip("malformed-json", (error as Error).message);
  }
  if (!isObject(record)) throw new RowSkip("invalid-record", "the line is not a JSON object");
  if (!Array.isArray(record.messages)) throw new RowSkip("invalid-record", "`messages` must be a list");
  if (!isObject(record.answer)) throw new RowSkip("invalid-record", "`answer` must be an object");
  const metadata = record.metadata === undefined || record.metadata === null ? {} : record.metadata;
  if (!isObject(metadata)) throw new RowSkip("invalid-record", "`metadata` must be an object");
  if (options.onlyCorrect && !isCorrect(metadata)) throw new RowSkip("not-correct", "metadata.correct is not 1 (--only-correct)");
  const answer = record.answer;
  if (answer.role !== undefined && answer.role !== "assistant") throw new RowSkip("invalid-record", "`answer.role` must be assistant");
  const context = normaliseHistory(record.messages, options);
  const target = assistantMessage(answer, true, options.normalizeWhitespace ?? false, "answer");
  if (target.content === "" && !target.tool_calls) throw new RowSkip("empty-target", "the answer has neither content nor tool calls");
  if (context.length === 0) throw new RowSkip("empty-context", "no history messages before the answer");
  if (lastQueryIndex(context) < 0)
    throw new RowSkip("no-user-query", "no real user query in the history; the template would drop the target's reasoning (spec P3)");
  if (record.tools !== undefined && record.tools !== null && !Array.isArray(record.tools)) throw new RowSkip("invalid-record", "`tools` must be a list");
  return { context, target, metadata, ...(Array.isArray(record.tools) && record.tools.length > 0 ? { tools: record.tools } : {}) };
}
