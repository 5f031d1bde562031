// The seed's SFT recipe on committed Python outputs, without Python: test/fixtures/sft/expected-*.jsonl were
// written once by python/crosscheck/sft_reference.py (transformers apply_chat_template twice + the Rust
// tokenizer) from test/fixtures/sft/tau2-rows.jsonl. toolgym must give the same renders, input_ids and
// labels on every row, and drop exactly the rows whose prefix check fails. The opt-in
// --normalize-whitespace is checked against hand-written expectations.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { ChatTemplate } from "../src/data/chat-template.ts";
import { SftRowBuilder } from "../src/data/sft/build-row.ts";
import { prepareTau2Sft } from "../src/data/sft/pipeline.ts";
import { normaliseTau2Line } from "../src/data/sft/tau2-record.ts";
import { SegmentTokenizer } from "../src/data/tokenizer.ts";
import { qwen3TokenizerDir } from "./support/qwen3.ts";
import { readJsonl, type OutputRow } from "./support/sft-rows.ts";

const fixtures = resolve(import.meta.dirname, "fixtures/sft");
const input = join(fixtures, "tau2-rows.jsonl");
const lines = readFileSync(input, "utf8").trim().split("\n");

interface Expected {
  line: number;
  input_ids?: number[];
  labels?: number[];
  prompt_text?: string;
  full_text?: string;
  skip?: string;
}

async function prepare(name: string, options: { enableThinking?: boolean; normalizeWhitespace?: boolean }) {
  const output = join(mkdtempSync(join(tmpdir(), "toolgym-sft-golden-")), `${name}.jsonl`);
  const report = await prepareTau2Sft({ input, output, modelDirectory: qwen3TokenizerDir(), maxTokens: 32768, workers: 0, ...options });
  const rows = new Map(readJsonl<OutputRow>(output).map((row) => [row.metadata.sft.line, row]));
  return { report, rows };
}

for (const [name, enableThinking] of [
  ["default", undefined],
  ["no-thinking", false],
] as const) {
  test(`${name}: renders, input_ids and labels equal the committed Python outputs on every fixture row`, async () => {
    const expected = readJsonl<Expected>(join(fixtures, `expected-${name}.jsonl`));
    assert.equal(expected.length, lines.length);
    const directory = qwen3TokenizerDir();
    const builder = new SftRowBuilder(ChatTemplate.fromDirectory(directory), SegmentTokenizer.fromDirectory(directory), { maxTokens: 32768, enableThinking });
    const { report, rows } = await prepare(name, { enableThinking });
    for (const reference of expected) {
      const row = rows.get(reference.line);
      if (reference.skip) {
        assert.equal(reference.skip, "prefix-mismatch", `line ${reference.line}`);
        assert.equal(row, undefined, `line ${reference.line}: Python dropped it (prefix check), toolgym wrote it`);
        const issue = report.issues.find((entry) => entry.line === reference.line);
        assert.equal(issue?.reason, "prefix-mismatch", `line ${reference.line} is reported as a prefix failure`);
        continue;
      }
      const example = normaliseTau2Line(lines[reference.line - 1]);
      assert.equal(builder.render(example.context, true), reference.prompt_text, `line ${reference.line}: prompt render`);
      assert.equal(builder.render([...example.context, example.target], false), reference.full_text, `line ${reference.line}: full render`);
      assert.ok(row, `line ${reference.line}: toolgym wrote no row`);
      assert.deepEqual(row.input_ids, reference.input_ids, `line ${reference.line}: input_ids`);
      assert.deepEqual(row.labels, reference.labels, `line ${reference.line}: labels`);
    }
    const written = expected.filter((entry) => !entry.skip).length;
    assert.equal(report.rows_out, written);
    assert.equal(report.skipped["prefix-mismatch"] ?? 0, lines.length - written);
    assert.ok(written >= (enableThinking === false ? 5 : 25), `${written} rows compared`);
  });
}

test("the fixture rows carry whitespace-edged reasoning and content, kept byte for byte by default", () => {
  const expected = readJsonl<Expected>(join(fixtures, "expected-default.jsonl"));
  // line 1: reasoning "  indented reasoning about roaming  " — the template strips only "\n"
  assert.ok(expected[0].full_text?.endsWith("<think>\n  indented reasoning about roaming  \n</think>\n\nLet me check your line.<|im_end|>\n"));
  // line 2: content "  \nSure, I can help.\n" keeps its spaces; the reasoning loses only its newlines
  assert.ok(expected[1].full_text?.endsWith("<think>\nThe user is abroad.\n</think>\n\n  \nSure, I can help.\n<|im_end|>\n"));
  let edged = 0;
  for (const line of lines) {
    const answer = (JSON.parse(line) as { answer: { thinking?: string; content?: string | null } }).answer;
    if (/^\s|\s$/.test(answer.thinking ?? "") || /^\s|\s$/.test(answer.content ?? "")) edged++;
  }
  assert.ok(edged >= 15, `only ${edged} targets with edge whitespace`);
});

test("--normalize-whitespace strips the target's reasoning and assistant content, and rescues whitespace-only reasoning", async () => {
  const directory = qwen3TokenizerDir();
  const tokenizer = SegmentTokenizer.fromDirectory(directory);
  const labelsText = (row: OutputRow | undefined) => tokenizer.decode(row?.labels.filter((label) => label !== -100) ?? []);
  const normalised = await prepare("normalised", { normalizeWhitespace: true });
  assert.equal(labelsText(normalised.rows.get(1)), "<think>\nindented reasoning about roaming\n</think>\n\nLet me check your line.<|im_end|>\n");
  assert.equal(labelsText(normalised.rows.get(2)), "<think>\nThe user is abroad.\n</think>\n\nSure, I can help.\n<|im_end|>\n");
  // a history turn's content is left-stripped too (line 11: "\n\nI found your line.  ")
  assert.match(tokenizer.decode(normalised.rows.get(11)?.input_ids ?? []), /<\|im_start\|>assistant\nI found your line\. {2}<\|im_end\|>/);
  const plain = await prepare("plain", {});
  assert.equal(labelsText(plain.rows.get(1)), "<think>\n  indented reasoning about roaming  \n</think>\n\nLet me check your line.<|im_end|>\n");
  // with enable_thinking=false a whitespace-only reasoning (line 3: " \t") breaks the prefix unless stripped
  const strict = await prepare("strict", { enableThinking: false });
  const issue = strict.report.issues.find((entry) => entry.line === 3);
  assert.equal(issue?.reason, "prefix-mismatch");
  assert.match(issue?.detail ?? "", /whitespace at the prompt\/target boundary, spec P4; --normalize-whitespace/);
  const rescued = await prepare("rescued", { enableThinking: false, normalizeWhitespace: true });
  assert.equal(labelsText(rescued.rows.get(3)), "Tabbed reply. <|im_end|>\n");
});
