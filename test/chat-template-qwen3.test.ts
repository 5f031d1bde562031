// The direct Qwen3 rendering (src/data/qwen3-chat-template.ts) against the jinja interpreter, which the
// fixture and crosscheck tests hold equal to Python transformers: the same text on synthetic Tau2 rows,
// the varied crosscheck conversations and hand-made edge cases, and jinja for every shape it leaves out.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ChatTemplate, type ChatRenderOptions } from "../src/data/chat-template.ts";
import { normaliseTau2Line } from "../src/data/sft/tau2-record.ts";
import { generateTau2Lines } from "../src/data/synth/generate.ts";
import { buildCases } from "./support/chat-cases.ts";
import { qwen3TokenizerDir } from "./support/qwen3.ts";

const template = ChatTemplate.fromDirectory(qwen3TokenizerDir());
const kwargsVariants: Record<string, unknown>[] = [{}, { enable_thinking: false }, { enable_thinking: true }];

/** Renders both ways; returns whether the direct path took the input. */
function assertSame(messages: unknown[], options: ChatRenderOptions, label: string): boolean {
  const direct = template.renderDirect(messages, options);
  const jinja = template.renderJinja(messages, options);
  if (direct !== undefined) assert.equal(direct, jinja, label);
  assert.equal(template.render(messages, options), jinja, `${label}: render()`);
  return direct !== undefined;
}

const tools = [
  {
    type: "function",
    function: { name: "lookup", description: "Finds “things” <b>&</b>", parameters: { type: "object", properties: { id: { type: "string" } } } },
  },
  { type: "function", function: { name: "add", parameters: { type: "object", properties: { amount: { type: "number", default: 2.5 } } } } },
];

const handMade: unknown[][] = [
  [{ role: "user", content: "hi" }],
  [
    { role: "system", content: "be brief" },
    { role: "user", content: "q" },
    { role: "assistant", content: "<think>\nplan\n</think>\n\nanswer" },
  ],
  [
    { role: "user", content: "q" },
    { role: "assistant", content: "\n\n<think>a<think>b</think>c</think>\n\nd" },
    { role: "user", content: "<tool_response>\nx\n</tool_response>" },
    { role: "assistant", content: "only</think>" },
  ],
  [
    { role: "system", content: "s" },
    { role: "user", content: "q" },
    {
      role: "assistant",
      content: "",
      reasoning_content: "\nwhy\n",
      tool_calls: [
        { name: "lookup", arguments: '{"id": "1"}' },
        { name: "add", arguments: "{}" },
      ],
    },
    { role: "tool", content: "r1" },
    { role: "tool", content: "r2" },
    { role: "assistant", content: "text", reasoning_content: "", tool_calls: [{ name: "lookup", arguments: "{}" }] },
    { role: "tool", content: "r3" },
    { role: "system", content: "late system" },
    { role: "assistant", content: "\n\nfinal", reasoning_content: "  r  " },
  ],
  [
    { role: "tool", content: "first" },
    { role: "assistant", content: "a", reasoning_content: null, tool_calls: [] },
    { role: "narrator", content: "ignored role" },
  ],
];

describe("Qwen3 direct rendering", () => {
  it("is recognised for the Qwen3 template only", () => {
    assert.notEqual(template.renderDirect([{ role: "user", content: "x" }], {}), undefined);
    const other = new ChatTemplate(`${template.source}{{ 'x' }}`);
    assert.equal(other.renderDirect([{ role: "user", content: "x" }], {}), undefined);
  });

  it("gives jinja's text on hand-made edge cases, with and without tools and generation prompt", () => {
    for (const [index, messages] of handMade.entries())
      for (const templateKwargs of kwargsVariants)
        for (const addGenerationPrompt of [false, true])
          for (const withTools of [false, true]) {
            const label = `case ${index} ${JSON.stringify(templateKwargs)} gen=${addGenerationPrompt} tools=${withTools}`;
            assert.ok(assertSame(messages, { templateKwargs, addGenerationPrompt, ...(withTools ? { tools } : {}) }, label), `${label} went to jinja`);
          }
  });

  it("gives jinja's text on 300 synthetic Tau2 rows (prompt and full renders)", () => {
    let direct = 0;
    let line = 0;
    for (const text of generateTau2Lines({ n: 300, seed: 3 })) {
      line++;
      const example = normaliseTau2Line(text, { keepHistoryReasoning: line % 2 === 0 });
      const templateKwargs = kwargsVariants[line % 3];
      if (assertSame(example.context, { addGenerationPrompt: true, templateKwargs, tools: example.tools }, `line ${line} prompt`)) direct++;
      if (assertSame([...example.context, example.target], { templateKwargs, tools: example.tools }, `line ${line} full`)) direct++;
    }
    assert.equal(direct, 600, "every normalised row takes the direct path");
  });

  it("gives jinja's text on the crosscheck conversations, and leaves non-string contents to jinja", () => {
    let direct = 0;
    let left = 0;
    for (const entry of buildCases(200, { stream: "qwen3-direct" })) {
      const options = { tools: entry.tools, addGenerationPrompt: entry.add_generation_prompt, templateKwargs: entry.template_kwargs };
      if (assertSame(entry.messages, options, entry.name)) direct++;
      else left++;
    }
    assert.ok(direct >= 20 && left >= 20, `direct ${direct}, jinja ${left}: both paths exercised`);
  });

  it("leaves other template variables and unusual shapes to jinja", () => {
    const messages = [{ role: "user", content: "x" }];
    assert.equal(template.renderDirect(messages, { templateKwargs: { custom: 1 } }), undefined);
    assert.equal(template.renderDirect([], {}), undefined);
    assert.equal(template.renderDirect([{ role: "user", content: ["part"] }], {}), undefined);
    assert.equal(template.renderDirect([{ role: "assistant", content: "", tool_calls: [{ function: { name: "f", arguments: "{}" } }] }], {}), undefined);
    assert.equal(template.renderDirect([{ role: "assistant", content: "", tool_calls: [{ name: "f", arguments: { a: 1 } }] }], {}), undefined);
    assert.equal(template.renderDirect([new Map([["role", "user"]])], {}), undefined);
  });
});
