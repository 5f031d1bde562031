import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { qwen3TokenizerDir } from "../../test/support/qwen3.ts";
import { ChatTemplate } from "./chat-template.ts";
import { PythonFloat, pythonJsonDumps } from "../python-semantics/index.ts";
import { normaliseTau2Line } from "./sft/tau2-record.ts";
import { generateTau2Lines } from "./synth/generate.ts";
import { SegmentTokenizer } from "./tokenizer.ts";

test("the template engine uses Python strip(chars) and tojson semantics", () => {
  const template = new ChatTemplate("{{ text.lstrip('\\n') }}|{{ text.strip() }}|{{ value | tojson }}|{{ value | tojson(indent=1) }}|{{ 1.0 | tojson }}");
  const output = template.render([], { templateKwargs: { text: "\n  x \n", value: { n: new PythonFloat(3), s: "<&>" } } });
  assert.equal(output, '  x \n|x|{"n": 3.0, "s": "<&>"}|{\n "n": 3.0,\n "s": "<&>"\n}|1.0');
});

test("the segment cache encodes exactly like whole-string encoding", () => {
  const directory = qwen3TokenizerDir();
  const template = ChatTemplate.fromDirectory(directory);
  const tokenizer = SegmentTokenizer.fromDirectory(directory);
  assert.ok(tokenizer.segmentCacheEnabled);
  const tricky = "a<|im_end|>b <think>\n</think>\r\n\u00a0é\u0301 👩‍👩‍👧 中文" + " ".repeat(300) + "<tool_call><|im_start|>user";
  assert.deepEqual(tokenizer.encode(tricky), tokenizer.encodeUncached(tricky));
  for (const line of generateTau2Lines({ n: 30, seed: 9 })) {
    const example = normaliseTau2Line(line);
    const text = template.render([...example.context, example.target]);
    assert.deepEqual(tokenizer.encode(text), tokenizer.encodeUncached(text));
  }
  assert.ok(tokenizer.stats.hits > tokenizer.stats.misses);
});

test("a bounded segment cache starts over when full and still encodes exactly", () => {
  const directory = qwen3TokenizerDir();
  const json = JSON.parse(readFileSync(join(directory, "tokenizer.json"), "utf8")) as Record<string, unknown>;
  const tokenizer = new SegmentTokenizer(json, {}, 2_000);
  const texts = Array.from({ length: 40 }, (_, index) => `<|im_start|>user\nrequest ${index} ${"x".repeat(index * 10)}<|im_end|>\n`);
  let largest = 0;
  for (const text of [...texts, ...texts]) {
    assert.deepEqual(tokenizer.encode(text), tokenizer.encodeUncached(text));
    largest = Math.max(largest, tokenizer.stats.entries);
  }
  // 40 distinct segments of 11-400 characters cannot all fit in 2,000 characters
  assert.ok(largest < 40, `cache held ${largest} segments`);
  assert.ok(tokenizer.stats.hits > 0);
});

test("normalisation handles every tool-call shape and Telecom user-side calls", () => {
  const line = pythonJsonDumps({
    messages: [
      { role: "system", content: "policy" },
      { role: "user", content: "my phone" },
      {
        role: "assistant",
        thinking: "old",
        tool_calls: [{ function: { name: "a", arguments: { x: new PythonFloat(1) } } }, { name: "b", arguments: '{"y":2}' }],
      },
      { role: "tool", content: null },
      { role: "tool", content: { ok: true } },
      { role: "user", content: null, tool_calls: [{ name: "check_status_bar", arguments: {} }] },
      { role: "tool", content: "No signal" },
      { role: "user", content: "no signal" },
    ],
    answer: { content: null, thinking: "  think \n", tool_calls: [{ name: "c" }] },
    metadata: { correct: 0 },
  });
  const example = normaliseTau2Line(line);
  assert.deepEqual(example.context, [
    { role: "system", content: "policy" },
    { role: "user", content: "my phone" },
    {
      role: "assistant",
      content: "",
      tool_calls: [
        { name: "a", arguments: '{"x": 1.0}' },
        { name: "b", arguments: '{"y":2}' },
      ],
    },
    { role: "tool", content: "" },
    { role: "tool", content: '{"ok": true}' },
    { role: "user", content: "no signal" },
  ]);
  // the seed's recipe keeps the reasoning byte for byte; --normalize-whitespace strips it
  assert.deepEqual(example.target, { role: "assistant", content: "", reasoning_content: "  think \n", tool_calls: [{ name: "c", arguments: "{}" }] });
  assert.equal(normaliseTau2Line(line, { normalizeWhitespace: true }).target.reasoning_content, "think");
  assert.throws(() => normaliseTau2Line(line, { onlyCorrect: true }), /correct/);
});
