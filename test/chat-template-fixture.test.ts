// The chat-template and token-id identity with Python transformers, on every run and without Python:
// test/fixtures/chat-templates/expected.json was written once by `apply_chat_template(tokenize=False/True)`
// (python/crosscheck/render_tokenize.py, via scripts/make-chat-template-fixture.ts) for the conversations in
// cases.json. toolgym's ChatTemplate + SegmentTokenizer must give the same text and ids for every case.
// test/sft-crosscheck.test.ts runs the same comparison live against Python on 320 other conversations.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { differences, featureCounts, parseCases, renderCases, type Rendered } from "./support/chat-cases.ts";
import { qwen3TokenizerDir } from "./support/qwen3.ts";

const fixtures = join(import.meta.dirname, "fixtures/chat-templates");

test("rendering and token ids equal the committed Python transformers output on 40 conversations", () => {
  const cases = parseCases(readFileSync(join(fixtures, "cases.json"), "utf8"));
  const expected = JSON.parse(readFileSync(join(fixtures, "expected.json"), "utf8")) as Record<string, Rendered>;
  assert.equal(cases.length, 40);
  assert.deepEqual(Object.keys(expected).sort(), cases.map((entry) => entry.name).sort(), "one expectation per case");

  const found = differences(cases, renderCases(qwen3TokenizerDir(), cases), expected);
  assert.deepEqual(found.text, [], "rendered text differs from Python transformers");
  assert.deepEqual(found.ids, [], "token ids differ from Python transformers");
  // the fixture really covers what the identity is about
  for (const [feature, count] of Object.entries(featureCounts(cases, expected))) assert.ok(count >= 3, `${feature} appears in only ${count} cases`);
});
