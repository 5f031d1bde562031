import type { Message } from "../../core/index.ts";
import { ACTION_BY_NAME } from "./constants.ts";

/**
 * BALROG's text harness for BabyAI (balrog-ai/BALROG at af7d1f1): the instruction prompt, the naive
 * agent's output filter and suffix, invalid-output handling and the history window.
 */

/** `ACTIONS` in `balrog/environments/babyai_text/__init__.py`, in order. */
const ACTION_DESCRIPTIONS: Array<[string, string]> = [
  ["turn left", "turn to the left"],
  ["turn right", "turn to the right"],
  ["go forward", "take one step forward"],
  ["pick up", "pick up the object below you"],
  ["drop", "drop the object that you are holding"],
  ["toggle", "manipulate the object in front of you"],
];

/** `get_instruction_prompt(env, mission)`, exactly (after `.strip()`). */
export function instructionPrompt(mission: string): string {
  const actions = ACTION_DESCRIPTIONS.map(([name, description]) => `${name}: ${description}`).join(",\n");
  return `You are an agent playing a simple navigation game. Your goal is to ${mission}. The following are the possible actions you can take in the game, followed by a short description of each action:

${actions}.

In a moment I will present you an observation.

Tips:
- Once the desired object you want to interact or pickup in front of you, you can use the 'toggle' action to interact with it.
- It doesn't make sense to repeat the same action over and over if the observation doesn't change.

PLAY!`;
}

/** The naive agent's instruction, appended (after "\n\n") to the last user message. */
export const NAIVE_INSTRUCTION =
  "You always have to output one of the above actions at a time and no other text. You always have to output an action until the episode terminates.";

/** The chain-of-thought agent's instruction (`chain_of_thought.py`), appended the same way instead. */
export const COT_INSTRUCTION =
  "First think about what's the best course of action step by step.\nFinally, provide a single output action at the end of the message in the form of: ACTION: <action>";

/** BALROG's `agent.type`: `naive` answers with the action alone, `cot` reasons and ends with "ACTION: <action>". */
export type BalrogAgent = "naive" | "cot";

/** The marker the CoT agent splits on (case-sensitive, after filtering). */
const ACTION_MARKER = "ACTION:";

/** `EnvWrapper`'s default action for invalid output. */
export const DEFAULT_ACTION = "go forward";

/**
 * Python's whitespace (`str.isspace()`, which is also what `\s` matches in a `str` pattern). It differs
 * from JavaScript's `\s`: it includes U+001C–U+001F and U+0085 and excludes U+FEFF.
 */
const PYTHON_WHITESPACE = "\\t\\n\\v\\f\\r \\u001c-\\u001f\\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const NOT_ALLOWED = new RegExp(`[^a-zA-Z:${PYTHON_WHITESPACE}]`, "g");
const IS_WHITESPACE = new RegExp(`^[${PYTHON_WHITESPACE}]$`);

/** `filter_letters`: `re.sub(r"[^a-zA-Z\s:]", "", s)`, keeping ASCII letters, Python whitespace and ':'. */
export function filterLetters(completion: string): string {
  return completion.replace(NOT_ALLOWED, "");
}

/** Python's `str.strip()` with no argument. */
export function pythonStrip(text: string): string {
  // Index scans rather than an anchored regex: `[\s]+$` backtracks quadratically on long inner runs.
  let start = 0;
  let end = text.length;
  while (start < end && IS_WHITESPACE.test(text[start] as string)) start++;
  while (end > start && IS_WHITESPACE.test(text[end - 1] as string)) end--;
  return text.slice(start, end);
}

/** What an agent takes from a reply: the naive filter, or the CoT rule (filter, last "ACTION:" segment, strip). */
export function extractAction(reply: string, agent: BalrogAgent): string {
  const filtered = filterLetters(reply);
  if (agent === "naive") return filtered;
  return pythonStrip(filtered.split(ACTION_MARKER).at(-1) as string);
}

export interface ParsedAction {
  /** The agent's parsed string (what BALROG records in the history and in `failed_candidates`). */
  candidate: string;
  /** Minigrid action id that was executed. */
  action: number;
  /** The executed action string. */
  actionName: string;
  valid: boolean;
}

/** The agent's parse, then `check_action_validity`: exact, case-sensitive membership, else the default action. */
export function parseReply(completion: string, agent: BalrogAgent = "naive"): ParsedAction {
  const candidate = extractAction(completion, agent);
  const action = ACTION_BY_NAME.get(candidate);
  if (action !== undefined) return { candidate, action, actionName: candidate, valid: true };
  return { candidate, action: ACTION_BY_NAME.get(DEFAULT_ACTION) as number, actionName: DEFAULT_ACTION, valid: false };
}

/** The text BALROG puts in front of the next observation after invalid output. */
export function invalidActionNotice(actionName: string): string {
  return `\n\nYour previous output did not contain a valid action. Defaulted to action: ${actionName}\n\nObservation:\n`;
}

/**
 * Rebuilds the exact prompt BALROG's agent sends from toolgym's full message log.
 *
 * The log is `[user: instruction, user: obs_0, assistant: reply_1, user: obs_1, ...]` where each user
 * observation is the raw `long_term_context` (with the invalid-action notice already prepended). BALROG
 * keeps `2·maxHistory` events (observations and the agent's parsed previous replies; an empty parsed reply
 * is not recorded: `if prev_action:`), labels old observations "Observation:\n", the newest
 * "Current Observation:\n", and appends the agent's instruction to the last user message. The CoT agent
 * shows its newest recorded action as "Previous plan:\n" + that step's whole reply (`max_cot_history` 1);
 * the reply is Python-stripped first, as BALROG's OpenAI-compatible clients return it.
 */
export function balrogPrompt(log: readonly Message[], maxHistory: number, agent: BalrogAgent = "naive"): Message[] {
  const instruction = log[0]?.content ?? "";
  const events: Array<{ role: "user" | "assistant"; text: string; reply?: string }> = [];
  for (let index = 1; index < log.length; index++) {
    const message = log[index] as Message;
    if (message.role === "user") events.push({ role: "user", text: message.content });
    else if (message.role === "assistant") {
      const reply = message.content ?? "";
      const action = extractAction(reply, agent);
      if (action !== "") events.push({ role: "assistant", text: action, reply });
    }
  }
  const window = events.slice(Math.max(0, events.length - 2 * maxHistory));
  const plan = agent === "cot" ? window.findLastIndex((event) => event.role === "assistant") : -1;
  const messages: Message[] = [{ role: "user", content: typeof instruction === "string" ? instruction : "" }];
  window.forEach((event, position) => {
    if (event.role === "assistant")
      messages.push({ role: "assistant", content: position === plan ? `Previous plan:\n${pythonStrip(event.reply ?? "")}` : event.text });
    else messages.push({ role: "user", content: `${position === window.length - 1 ? "Current Observation:\n" : "Observation:\n"}${event.text}` });
  });
  const last = messages[messages.length - 1] as Message;
  if (last.role === "user") last.content += `\n\n${agent === "cot" ? COT_INSTRUCTION : NAIVE_INSTRUCTION}`;
  return messages;
}
