/**
 * `toolgym sft synth`: realistic Tau2-format SFT lines (the AReaL-tau2-data layout,
 * `{messages, answer, metadata}`, one line per assistant turn, ~13 rows per dialog sharing a prefix),
 * with the awkward shapes found in the wild: nested and flat tool calls, arguments as object or JSON
 * string, tool-call-only messages with missing or null content, `answer.thinking`, history reasoning,
 * text plus tool calls, several calls per turn, whitespace at both ends of reasoning and content (also
 * whitespace-only reasoning), floats such as `100.0`/`1e-05`,
 * integer-like keys, Telecom user-side tool calls (with and without `requestor`) and large tool results.
 * Pure function of (seed, n).
 */
import { type Random, createRandom } from "../../core/random.ts";
import { PythonFloat, pythonJsonDumps } from "../../python-semantics/index.ts";
import { type SynthDomain, type SynthTool, domainTools, systemPrompt, telecomUserTools, toolArguments, toolResult } from "./domains.ts";

type Message = Record<string, unknown>;

interface DialogShape {
  nested: boolean;
  argumentsAsString: boolean;
  contentOnCalls: "missing" | "null" | "empty";
  thinking: boolean;
  historyThinking: boolean;
  requestor: boolean;
}

const requests: Record<SynthDomain, string[]> = {
  airline: [
    "I need to change my flight to a later date.",
    "Please cancel my reservation, I can't travel anymore.",
    "My flight was delayed and I want compensation.",
    "Can I upgrade my cabin to business?",
  ],
  retail: [
    "I want to exchange the keyboard I received for one with clicky switches.",
    "Please return the water bottle and the hiking boots from my last order.",
    "Where is my order? It has been two weeks.",
    "Can I change the shipping address of my pending order?",
  ],
  telecom: [
    "My phone has no mobile data since this morning.",
    "I'm abroad and roaming doesn't work.",
    "My bill looks too high this month.",
    "I can't send MMS messages with pictures.",
  ],
};

const userReplies = [
  "Yes, please go ahead.",
  "My user id is in my profile, let me check... it's the one ending in 42.",
  "No, that's all I wanted.",
  "Hmm, can you double check the price first?",
  "yes",
  "Sure — the zip is 94107.",
  "I'd rather keep the original payment method.",
];

function toolCall(random: Random, shape: DialogShape, tool: SynthTool, requestor?: string): Message {
  const args = toolArguments(random, tool);
  const argumentsValue = shape.argumentsAsString ? pythonJsonDumps(args) : args;
  const id = `call_${Math.floor(random.next() * 1e9).toString(36)}`;
  if (shape.nested) return { id, type: "function", function: { name: tool.name, arguments: argumentsValue }, ...(requestor ? { requestor } : {}) };
  return { id, name: tool.name, arguments: argumentsValue, ...(requestor ? { requestor } : {}) };
}

/** Edge whitespace as found in real reasoning and replies; the template strips only "\n", so it is trained. */
const leadingWhitespace = ["", "", "", "\n", "  ", "\n\n", " \t", "\n  ", "  \n"];
const trailingWhitespace = ["", "", "", "\n", " ", "  ", "\n\n", " \n"];

function thinkingText(random: Random, domain: SynthDomain): string {
  // whitespace-only reasoning: renders as a non-empty think block, which breaks the prefix with enable_thinking=false
  if (random.chance(0.04)) return random.pick([" ", "\n", "  \n"]);
  const lead = random.pick(leadingWhitespace);
  const body = Array.from({ length: random.integer(1, 4) }, () =>
    random.pick([
      `The user wants help with their ${domain} request; I should verify identity first.`,
      "Per policy I must confirm before making changes.",
      "The tool returned the details; compare them with what the user said.",
      "Only one action at a time, so call the lookup tool now.",
    ]),
  ).join(" ");
  return `${lead}${body}${random.pick(trailingWhitespace)}`;
}

function assistantText(random: Random): string {
  const text = random.pick([
    "I can help with that. Could you please provide your user id?",
    "Here are the details I found. Would you like me to proceed? Please answer yes to confirm.",
    "Done! Your request has been processed. Is there anything else?",
    "I'm sorry, but per our policy I can't do that. I can offer a certificate instead.",
  ]);
  if (!random.chance(0.15)) return text;
  return random.pick(leadingWhitespace.slice(3)) + text + random.pick(trailingWhitespace);
}

function callMessage(random: Random, shape: DialogShape, calls: Message[], text?: string): Message {
  const message: Message = { role: "assistant" };
  if (text !== undefined) message.content = text;
  else if (shape.contentOnCalls === "null") message.content = null;
  else if (shape.contentOnCalls === "empty") message.content = "";
  message.tool_calls = calls;
  return message;
}

/** One dialog as a list of messages (system, greeting, user request, agent/tool/user turns, closing). */
function generateDialog(random: Random, domain: SynthDomain, shape: DialogShape): Message[] {
  const messages: Message[] = [
    { role: "system", content: systemPrompt(domain) },
    { role: "assistant", content: "Hi! How can I help you today?" },
    { role: "user", content: random.pick(requests[domain]) },
  ];
  const tools = domainTools(domain);
  const steps = random.integer(5, 12);
  const largeStep = random.chance(0.06) ? random.integer(0, steps - 1) : -1;
  for (let step = 0; step < steps; step++) {
    const kind = random.next();
    if (domain === "telecom" && kind < 0.15) {
      // the agent asks the user to act on the phone; the user's device tool calls and their results follow
      messages.push({ role: "assistant", content: "Could you please check the status bar of your phone and tell me what you see?" });
      const userTool = random.pick(telecomUserTools);
      const calls = [{ id: `ucall_${step}`, name: userTool, arguments: {}, ...(shape.requestor ? { requestor: "user" } : {}) }];
      messages.push({ role: "user", content: random.chance(0.5) ? null : "", tool_calls: calls });
      messages.push({
        role: "tool",
        content: `Status bar: ${random.pick(["No signal", "4G", "Airplane mode on", "LTE | Data off"])}`,
        tool_call_id: `ucall_${step}`,
        ...(shape.requestor ? { requestor: "user" } : {}),
      });
      messages.push({ role: "user", content: random.pick(["It shows no signal at all.", "It says airplane mode is on.", "I see 4G but nothing loads."]) });
    } else if (kind < 0.65) {
      const count = random.chance(0.3) ? random.integer(2, 3) : 1;
      const chosen = Array.from({ length: count }, () => random.pick(tools));
      const text = random.chance(0.15) ? random.pick(["Let me look that up for you.", "  Let me check.\n", "\nOne moment. "]) : undefined;
      const message = callMessage(
        random,
        shape,
        chosen.map((tool) => toolCall(random, shape, tool)),
        text,
      );
      if (shape.historyThinking && shape.thinking) message.thinking = thinkingText(random, domain);
      messages.push(message);
      for (const tool of chosen) messages.push({ role: "tool", content: toolResult(random, domain, tool, step === largeStep), tool_call_id: "" });
    } else {
      messages.push({
        role: "assistant",
        content: assistantText(random),
        ...(shape.historyThinking && shape.thinking ? { thinking: thinkingText(random, domain) } : {}),
      });
      messages.push({ role: "user", content: random.pick(userReplies) });
    }
  }
  messages.push({ role: "assistant", content: "Thank you for contacting us. Have a great day!" });
  return messages;
}

function metadataFor(random: Random, domain: SynthDomain, dialog: number, turn: number, correct: number, reward: number): Record<string, unknown> {
  const base: Record<string, unknown> = { source_dialog_id: `${domain}_dialog_${dialog}`, turn_index: turn };
  if (domain === "airline") Object.assign(base, { seed_pattern_task_id: `airline_task_${dialog % 50}`, reason_for_call: "change flight" });
  if (domain === "retail") Object.assign(base, { scenario_id: `scenario_${dialog}`, reason_for_call: "exchange item" });
  if (domain === "telecom") Object.assign(base, { difficulty: random.pick(["easy", "medium", "hard"]), num_subtasks: random.integer(1, 4) });
  return { ...base, correct, reward: new PythonFloat(reward) };
}

/** Rows of one dialog: one per assistant turn after the greeting, `answer.thinking` on most targets. */
function dialogRows(seed: number, dialog: number): string[] {
  const random = createRandom("synth-tau2", seed, dialog);
  const domain = random.pick<SynthDomain>(["airline", "airline", "retail", "retail", "telecom"]);
  const shape: DialogShape = {
    nested: random.chance(0.5),
    argumentsAsString: random.chance(0.5),
    contentOnCalls: random.pick(["missing", "null", "empty"] as const),
    thinking: random.chance(0.9),
    historyThinking: random.chance(0.3),
    requestor: random.chance(0.5),
  };
  const messages = generateDialog(random, domain, shape);
  const outcome = random.next();
  const [correct, reward] = outcome < 0.74 ? [1, 1] : outcome < 0.94 ? [0, 0] : outcome < 0.99 ? [0, 1] : [1, 0];
  const rows: string[] = [];
  let turn = 0;
  messages.forEach((message, index) => {
    if (message.role !== "assistant" || index <= 1) return;
    const answer: Message = { ...message };
    delete answer.thinking;
    if (shape.thinking) answer.thinking = thinkingText(random, domain);
    const history = messages.slice(0, index);
    rows.push(pythonJsonDumps({ messages: history, answer, metadata: metadataFor(random, domain, dialog, turn++, correct, reward) }));
  });
  return rows;
}

/** The first `n` lines of the synthetic file for `seed` (dialogs are generated until n rows exist). */
export function* generateTau2Lines(options: { n: number; seed?: number }): Generator<string> {
  let produced = 0;
  for (let dialog = 0; produced < options.n; dialog++) {
    for (const row of dialogRows(options.seed ?? 0, dialog)) {
      if (produced >= options.n) return;
      produced++;
      yield row;
    }
  }
}
