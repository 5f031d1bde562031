import { STOP, TRANSFER } from "./prompts.ts";
import type { Tau2Task } from "./types.ts";
import type { UserCall, UserMove, UserSimulator } from "./user.ts";

/**
 * The default simulated customer (no user model): a rule-based stand-in for tau2's LLM user that follows
 * tau2's user guidelines (assets/tau2/user_simulator/simulation_guidelines*.md). It opens with its reason
 * for calling, gives its known information when asked, never repeats its task instructions, performs any
 * of its own tools the agent names (one action at a time, gold or not: it cannot know the gold), and ends
 * the conversation as tau2's user does: `###STOP###` once its goal is satisfied, `###TRANSFER###` once the
 * agent says it transfers it, and `###STOP###` when the agent keeps offering nothing it can act on.
 */
export interface ScriptedCustomerOptions {
  /** The names of the customer's own tools (tau2's user tools of the domain). */
  userTools?: readonly string[];
  /**
   * Whether the customer's goal holds in the conversation so far (the episode asks tau2's evaluator; the
   * customer reads the outcome as tau2's user reads its device and the agent's answers, never the gold steps).
   */
  goalMet?: () => boolean;
  /** Replies before the customer gives up (tau2's max_steps usually comes first). */
  maxReplies?: number;
}

/** Agent messages in a row that neither ask the customer anything nor solve its problem before it gives up. */
const PATIENCE = 3;

const CONDITIONAL = /\b(if|unless|otherwise|only|never|instead|rather|ask the agent|tell the agent|first try|then)\b/i;

/** Second-person scenario text in the customer's own voice ("You want to return…" → "I want to return…"). */
export function firstPerson(text: string): string {
  return text
    .replace(/\bYou (?=mobile|phone|internet|data)/g, "My ")
    .replace(/\b[Yy]ou are\b/g, "I am")
    .replace(/\b[Yy]ou were\b/g, "I was")
    .replace(/\b[Yy]ou're\b/g, "I'm")
    .replace(/\bYourself\b/g, "Myself")
    .replace(/\byourself\b/g, "myself")
    .replace(/\bYour\b/g, "My")
    .replace(/\byour\b/g, "my")
    .replace(/\b(to|for|with|at|by|from|of|ask|asks|help|give|tell|let|send|sends|call|contact)\s+you\b/g, "$1 me")
    .replace(/\b[Yy]ou\b/g, "I")
    .replace(/^(Create|Request|Ask|Tell|Use|Check|Update|Mark|Delete|Cancel|Change|Get|Find)\b/, (verb) => `I would like to ${verb.toLowerCase()}`);
}

function sentences(text: string): string[] {
  return text
    .replace(/\s*\([^)]*\)/g, "")
    .split(/(?<=[.!?])\s+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== "");
}

/**
 * The customer's first message: its reason for calling without the conditions and private preferences
 * the scenario gives it (those are for later, when the agent asks), in the first person.
 */
export function openingRequest(task: Tau2Task): string {
  const instructions = task.user_scenario.instructions;
  const reason = typeof instructions === "string" ? instructions : (instructions.reason_for_call ?? "");
  const all = sentences(reason);
  const plain = all.filter((sentence) => !CONDITIONAL.test(sentence));
  const chosen = plain.length > 0 ? plain : all.slice(0, 1).map((sentence) => sentence.replace(/,?\s*\b(if|unless)\b.*$/i, "."));
  return chosen.map(firstPerson).join(" ") || "Hi, I need some help.";
}

/** What the customer knows about itself, given when the agent asks who it is. */
function knownInfo(task: Tau2Task): string | null {
  const instructions = task.user_scenario.instructions;
  if (typeof instructions === "string" || !instructions.known_info) return null;
  return sentences(instructions.known_info).map(firstPerson).join(" ");
}

/** The first balanced JSON object in `text` from `start`, parsed; null when there is none. */
function objectAfter(text: string, start: number): Record<string, unknown> | null {
  const open = text.indexOf("{", start);
  if (open === -1) return null;
  let depth = 0;
  for (let position = open; position < text.length; position++) {
    if (text[position] === "{") depth++;
    else if (text[position] === "}" && --depth === 0) {
      try {
        const value = JSON.parse(text.slice(open, position + 1)) as unknown;
        return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
      } catch {
        return null;
      }
    }
  }
  return null;
}

const ASKS_INFORMATION =
  /\b(name|e-?mail|phone|zip|zipcode|user ?id|order ?id|order number|account|address|identify|identity|verify|authenticate|details|number|location|who (are|am))\b/i;
const ASKS_CONFIRMATION = /\b(confirm|proceed|go ahead|shall i|should i|do you want|would you like me|is that (correct|right|ok)|okay\?|yes or no|\(yes\))/i;
const TRANSFERS = /\btransferr?(ed|ing)? you\b|\btransfer(ring)? (you|the call|your call)\b/i;

export function createScriptedUser(task: Tau2Task, options: ScriptedCustomerOptions = {}): UserSimulator {
  const tools = [...(options.userTools ?? [])].sort((a, b) => b.length - a.length);
  const maxReplies = options.maxReplies ?? 30;
  let replies = 0;
  let idle = 0;
  let toldInfo = false;
  const say = (text: string): UserMove => ({ text, calls: [] });
  const named = (text: string): { name: string; index: number }[] => {
    const found: { name: string; index: number }[] = [];
    for (const name of tools) {
      const match = new RegExp(`\\b${name}\\b`).exec(text);
      // A longer name that contains this one was already found at the same place.
      if (match && !found.some((other) => other.index <= match.index && match.index < other.index + other.name.length))
        found.push({ name, index: match.index });
    }
    return found.sort((a, b) => a.index - b.index);
  };
  return {
    async respond(event) {
      // tau2's user grounds what it says in its tools' results and reports them.
      if ("toolResults" in event) return say(event.toolResults.map((result) => `I ran ${result.call.name}: ${result.content}`).join("\n"));
      replies++;
      const text = event.agentText;
      if (replies === 1) return say(openingRequest(task));
      if (TRANSFERS.test(text)) return say(`Thank you. ${TRANSFER}`);
      if (replies >= maxReplies) return say(`I have to go now. ${STOP}`);
      const asked = named(text);
      if (asked.length > 1) {
        idle = 0;
        return say("I can only do one action at a time. Please tell me one action at a time.");
      }
      const [action] = asked;
      if (action) {
        idle = 0;
        const call: UserCall = { name: action.name, arguments: objectAfter(text, action.index + action.name.length) ?? {} };
        return { text: null, calls: [call] };
      }
      // Asked to act, it acts; otherwise it looks at whether its problem is solved, and ends the call if so.
      if (options.goalMet?.()) return say(`Thank you, that is everything I needed. ${STOP}`);
      if (ASKS_INFORMATION.test(text) && text.includes("?")) {
        idle = 0;
        const known = knownInfo(task);
        if (!known) return say("I'm sorry, I don't have that information.");
        if (toldInfo) return say(`As I said, ${known.charAt(0).toLowerCase()}${known.slice(1)}`);
        toldInfo = true;
        return say(known);
      }
      if (ASKS_CONFIRMATION.test(text)) {
        idle = 0;
        return say("Yes, please go ahead.");
      }
      // Nothing asked of the customer and its problem is not solved: it says so, and gives up at last.
      if (++idle >= PATIENCE) return say(`It seems my problem cannot be solved today. ${STOP}`);
      return say(`That does not solve my problem yet. ${openingRequest(task)}`);
    },
  };
}
