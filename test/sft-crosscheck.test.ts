// Cross-check against Python transformers: ≥ 300 generated conversations rendered and tokenised by
// toolgym (ChatTemplate + SegmentTokenizer) and by `apply_chat_template(tokenize=False/True)` in one
// Python process; text and ids must be identical. Cases are raw (not normalised): tools, nested/flat tool
// calls with object or string arguments, reasoning_content with stray whitespace, null content, user-side
// tool calls, enable_thinking true/false/unset, add_generation_prompt true/false.
import assert from "node:assert/strict";
import { runPython } from "./sft-python.ts";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { ChatTemplate } from "../src/data/chat-template.ts";
import { PythonFloat, parsePythonJson, pythonJsonDumps } from "../src/data/python-json.ts";
import { SegmentTokenizer } from "../src/data/tokenizer.ts";
import { createRandom } from "../src/core/random.ts";
import { generateTau2Lines } from "../src/data/synth/generate.ts";
import { qwen3TokenizerDir, requirePython } from "./support/qwen3.ts";

interface Case {
  name: string;
  messages: unknown[];
  tools?: unknown[];
  add_generation_prompt: boolean;
  template_kwargs?: Record<string, unknown>;
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

/** Conversations from the synthetic generator, cut at random points and varied. */
function buildCases(count: number): Case[] {
  const random = createRandom("crosscheck-cases");
  const cases: Case[] = [];
  for (const line of generateTau2Lines({ n: count, seed: 7 })) {
    const record = parsePythonJson(line) as { messages: Record<string, unknown>[]; answer: Record<string, unknown> };
    let messages = [...record.messages, record.answer].map((message) => {
      const copy: Record<string, unknown> = { ...message };
      if (typeof copy.thinking === "string") {
        if (random.chance(0.7)) copy.reasoning_content = copy.thinking;
        delete copy.thinking;
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

test("rendering and token ids equal Python transformers apply_chat_template on 320 conversations", async () => {
  const directory = qwen3TokenizerDir();
  const template = ChatTemplate.fromDirectory(directory);
  const tokenizer = SegmentTokenizer.fromDirectory(directory);
  const cases = buildCases(320);
  const workDirectory = mkdtempSync(join(tmpdir(), "toolgym-crosscheck-"));
  const casesPath = join(workDirectory, "cases.json");
  const outputPath = join(workDirectory, "python.json");
  // pythonJsonDumps keeps PythonFloat as 100.0 and Map key order, so Python sees the same values
  writeFileSync(casesPath, pythonJsonDumps(cases));
  const script = resolve(import.meta.dirname, "../python/crosscheck/render_tokenize.py");
  // Python runs while toolgym renders
  const pythonRun = runPython(requirePython(), [script, directory, casesPath, outputPath]);
  const rendered = cases.map((entry) => {
    const text = template.render(entry.messages, {
      tools: entry.tools,
      addGenerationPrompt: entry.add_generation_prompt,
      templateKwargs: entry.template_kwargs,
    });
    return { text, ids: tokenizer.encode(text) };
  });
  const run = await pythonRun;
  assert.equal(run.status, 0, run.stderr);
  const expected = JSON.parse(readFileSync(outputPath, "utf8")) as Record<string, { text: string; ids: number[] }>;

  const textDifferences: string[] = [];
  const idDifferences: string[] = [];
  const features = { tools: 0, toolCalls: 0, reasoning: 0, thinkingFalse: 0, thinkingTrue: 0, generationPrompt: 0 };
  cases.forEach((entry, index) => {
    const { text, ids } = rendered[index];
    const reference = expected[entry.name];
    if (text !== reference.text) textDifferences.push(entry.name);
    if (ids.length !== reference.ids.length || ids.some((id, index) => id !== reference.ids[index])) idDifferences.push(entry.name);
    if (entry.tools) features.tools++;
    if (entry.add_generation_prompt) features.generationPrompt++;
    if (entry.template_kwargs?.enable_thinking === false) features.thinkingFalse++;
    if (entry.template_kwargs?.enable_thinking === true) features.thinkingTrue++;
    if (text.includes('<tool_call>\n{"name": "')) features.toolCalls++;
    if (/<think>\n\S/.test(text)) features.reasoning++;
  });
  assert.deepEqual(textDifferences, [], "rendered text differs from Python");
  assert.deepEqual(idDifferences, [], "token ids differ from Python");
  // the sample really covers the features the cross-check is about
  for (const [feature, count] of Object.entries(features)) assert.ok(count >= 20, `${feature} appears in only ${count} cases`);
});
