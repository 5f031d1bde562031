import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { qwen3TokenizerDir } from "../../test/support/qwen3.ts";
import { ChatTemplate } from "./chat-template.ts";
import { PythonFloat, formatPythonFloat, parsePythonJson, pythonJsonDumps, pythonStrip } from "./python-json.ts";
import { normaliseTau2Line } from "./sft/tau2-record.ts";
import { generateTau2Lines } from "./synth/generate.ts";
import { SegmentTokenizer } from "./tokenizer.ts";

test("formatPythonFloat follows Python repr", () => {
  const cases: [number, string][] = [
    [100, "100.0"],
    [1e-7, "1e-07"],
    [1.5e-5, "1.5e-05"],
    [0.0001, "0.0001"],
    [1e16, "1e+16"],
    [1234567890123456, "1234567890123456.0"],
    [-0, "-0.0"],
    [0.1 + 0.2, "0.30000000000000004"],
    [2.5, "2.5"],
    [-1.25e22, "-1.25e+22"],
  ];
  for (const [value, expected] of cases) assert.equal(formatPythonFloat(value), expected);
});

test("parsePythonJson keeps float lexemes, big integers and integer-key order; dumps like json.dumps", () => {
  const text = '{"b": 100.0, "a": [1e-7, -0, 12345678901234567890], "m": {"10": 1, "2": 2, "x": "é\\n"}}';
  const value = parsePythonJson(text);
  assert.equal(pythonJsonDumps(value), '{"b": 100.0, "a": [1e-07, 0, 12345678901234567890], "m": {"10": 1, "2": 2, "x": "é\\n"}}');
  assert.equal(
    pythonJsonDumps(value, { ensureAscii: true, separators: [",", ":"] }),
    '{"b":100.0,"a":[1e-07,0,12345678901234567890],"m":{"10":1,"2":2,"x":"\\u00e9\\n"}}',
  );
  assert.equal(pythonJsonDumps({ a: [1, { b: null }] }, { indent: 2 }), '{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ]\n}');
  assert.ok((value as { b: unknown }).b instanceof PythonFloat);
  assert.throws(() => parsePythonJson('{"a": 1'), /expected/);
  assert.throws(() => parsePythonJson('{"a": 1} x'), /after the JSON value/);
});

test("pythonStrip honours chars and Python's whitespace set", () => {
  assert.equal(pythonStrip("  \nSure\n", "left", "\n"), "  \nSure\n");
  assert.equal(pythonStrip("\n\nSure\n", "both", "\n"), "Sure");
  assert.equal(pythonStrip("\ufeff x \u00a0", "both"), "\ufeff x");
  assert.equal(pythonStrip("\u001c x", "left"), "x");
});

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
