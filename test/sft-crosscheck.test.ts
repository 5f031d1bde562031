// Cross-check against Python transformers: ≥ 300 generated conversations rendered and tokenised by
// toolgym (ChatTemplate + SegmentTokenizer) and by `apply_chat_template(tokenize=False/True)` in one
// Python process; text and ids must be identical. Cases are raw (not normalised): tools, nested/flat tool
// calls with object or string arguments, reasoning_content with stray whitespace, null content, user-side
// tool calls, enable_thinking true/false/unset, add_generation_prompt true/false. The same identity is
// checked without Python on committed outputs by test/chat-template-fixture.test.ts.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { pythonJsonDumps } from "../src/python-semantics/index.ts";
import { runPython } from "./sft-python.ts";
import { buildCases, differences, featureCounts, renderCases, type Rendered } from "./support/chat-cases.ts";
import { qwen3TokenizerDir, requirePython } from "./support/qwen3.ts";

test("rendering and token ids equal Python transformers apply_chat_template on 320 conversations", async () => {
  const directory = qwen3TokenizerDir();
  const cases = buildCases(320);
  const workDirectory = mkdtempSync(join(tmpdir(), "toolgym-crosscheck-"));
  const casesPath = join(workDirectory, "cases.json");
  const outputPath = join(workDirectory, "python.json");
  // pythonJsonDumps keeps PythonFloat as 100.0 and Map key order, so Python sees the same values
  writeFileSync(casesPath, pythonJsonDumps(cases));
  const script = resolve(import.meta.dirname, "../python/crosscheck/render_tokenize.py");
  // Python runs while toolgym renders
  const pythonRun = runPython(requirePython(), [script, directory, casesPath, outputPath]);
  const rendered = renderCases(directory, cases);
  const run = await pythonRun;
  assert.equal(run.status, 0, run.stderr);
  const expected = JSON.parse(readFileSync(outputPath, "utf8")) as Record<string, Rendered>;

  const found = differences(cases, rendered, expected);
  assert.deepEqual(found.text, [], "rendered text differs from Python");
  assert.deepEqual(found.ids, [], "token ids differ from Python");
  // the sample really covers the features the cross-check is about
  for (const [feature, count] of Object.entries(featureCounts(cases, expected))) assert.ok(count >= 20, `${feature} appears in only ${count} cases`);
});
