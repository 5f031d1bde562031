// Chat-template cases shared by the live Python cross-check (test/sft-crosscheck.test.ts) and the committed
// fixture (test/fixtures/chat-templates/, checked by test/chat-template-fixture.test.ts without Python).
import { createRandom } from "../../src/core/random.ts";
import { ChatTemplate } from "../../src/data/chat-template.ts";
import { PythonFloat, parsePythonJson } from "../../src/python-semantics/index.ts";
import { generateTau2Lines } from "../../src/data/synth/generate.ts";
import { SegmentTokenizer } from "../../src/data/tokenizer.ts";

export interface Case {
  name: string;
  messages: unknown[];
  tools?: unknown[];
  add_generation_prompt: boolean;
  template_kwargs?: Record<string, unknown>;
}

/** What Python transformers gives for one case: `apply_chat_template` with tokenize=False and True. */
export interface Rendered {
  text: string;
  ids: number[];
}

const tools = [
  {
    type: "function",
    function: {
      name: "get_user_details",
      description: "Get a user's details — “quoted” <b>&</b>",
      parameters: {
        type: "object",
        properties: { user_id: { type: "string" }, limit: { type: "integer", minimum: 1e-7, maximum: new PythonFloat(100) } },
        required: ["user_id"],
      },
    },
  },
  {
    type: "function",
    function: { name: "refuel_data", description: "Adds data.", parameters: { type: "object", properties: { gb_amount: { type: "number", default: 2.5 } } } },
  },
];

export interface CaseOptions {
  /** Name of the random stream that cuts and varies the conversations. */
  stream?: string;
  /** Seed of the synthetic generator. */
  seed?: number;
  /** Cut every string content and reasoning to this many characters (keeps a committed fixture small). */
  maxContentChars?: number;
}

/** Conversations from the synthetic generator, cut at random points and varied. */
export function buildCases(count: number, options: CaseOptions = {}): Case[] {
  const random = createRandom(options.stream ?? "crosscheck-cases");
  const limit = options.maxContentChars;
  const cases: Case[] = [];
  for (const line of generateTau2Lines({ n: count, seed: options.seed ?? 7 })) {
    const record = parsePythonJson(line) as { messages: Record<string, unknown>[]; answer: Record<string, unknown> };
    let messages = [...record.messages, record.answer].map((message) => {
      const copy: Record<string, unknown> = { ...message };
      if (typeof copy.thinking === "string") {
        if (random.chance(0.7)) copy.reasoning_content = copy.thinking;
        delete copy.thinking;
      }
      if (limit !== undefined) {
        for (const key of ["content", "reasoning_content"]) if (typeof copy[key] === "string") copy[key] = (copy[key] as string).slice(0, limit);
      }
      return copy;
    });
    // shorter conversations keep Python's work inside the test budget
    const start = random.chance(0.5) ? Math.max(1, messages.length - random.integer(3, 12)) : 1;
    messages = [messages[0], ...messages.slice(start)];
    if (random.chance(0.3)) messages = messages.slice(0, random.integer(2, messages.length));
    const thinking = random.pick([undefined, true, false]);
    cases.push({
      name: `case-${cases.length}`,
      messages,
      ...(random.chance(0.4) ? { tools } : {}),
      add_generation_prompt: random.chance(0.5),
      ...(thinking === undefined ? {} : { template_kwargs: { enable_thinking: thinking } }),
    });
  }
  return cases;
}

/** Renders and tokenises every case with toolgym (ChatTemplate + SegmentTokenizer from `directory`). */
export function renderCases(directory: string, cases: Case[]): Rendered[] {
  const template = ChatTemplate.fromDirectory(directory);
  const tokenizer = SegmentTokenizer.fromDirectory(directory);
  return cases.map((entry) => {
    const text = template.render(entry.messages, {
      tools: entry.tools,
      addGenerationPrompt: entry.add_generation_prompt,
      templateKwargs: entry.template_kwargs,
    });
    return { text, ids: tokenizer.encode(text) };
  });
}

/** The case names whose text, and those whose ids, differ from the reference. */
export function differences(cases: Case[], rendered: Rendered[], expected: Record<string, Rendered>): { text: string[]; ids: string[] } {
  const text: string[] = [];
  const ids: string[] = [];
  cases.forEach((entry, index) => {
    const mine = rendered[index] as Rendered;
    const reference = expected[entry.name];
    if (!reference || mine.text !== reference.text) text.push(entry.name);
    if (!reference || mine.ids.length !== reference.ids.length || mine.ids.some((id, position) => id !== reference.ids[position])) ids.push(entry.name);
  });
  return { text, ids };
}

/** How many cases exercise each feature the identity is about (counted on the reference text). */
export function featureCounts(cases: Case[], expected: Record<string, Rendered>): Record<string, number> {
  const features = { tools: 0, toolCalls: 0, reasoning: 0, thinkingFalse: 0, thinkingTrue: 0, generationPrompt: 0, noGenerationPrompt: 0 };
  for (const entry of cases) {
    const text = expected[entry.name]?.text ?? "";
    if (entry.tools) features.tools++;
    if (entry.add_generation_prompt) features.generationPrompt++;
    else features.noGenerationPrompt++;
    if (entry.template_kwargs?.enable_thinking === false) features.thinkingFalse++;
    if (entry.template_kwargs?.enable_thinking === true) features.thinkingTrue++;
    if (text.includes('<tool_call>\n{"name": "')) features.toolCalls++;
    if (/<think>\n\S/.test(text)) features.reasoning++;
  }
  return features;
}

/** Reads a cases file written by `pythonJsonDumps` (floats such as 100.0 stay Python floats). */
export function parseCases(text: string): Case[] {
  return parsePythonJson(text) as unknown as Case[];
}
