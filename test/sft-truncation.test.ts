// Truncation invariants on every truncated row: length ≤ max; the system policy, the final user request
// and the target turn intact; shortened payloads keep head and tail around a visible marker; labels cover
// exactly the target turn.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ChatTemplate } from "../src/data/chat-template.ts";
import { prepareTau2Sft } from "../src/data/sft/pipeline.ts";
import { lastQueryIndex, normaliseTau2Line } from "../src/data/sft/tau2-record.ts";
import { parseTruncatedPayload } from "../src/data/sft/truncate.ts";
import { generateTau2Lines } from "../src/data/synth/generate.ts";
import { SegmentTokenizer } from "../src/data/tokenizer.ts";
import { qwen3TokenizerDir } from "./support/qwen3.ts";

interface OutputRow {
  input_ids: number[];
  labels: number[];
  assistant_masks: number[];
  metadata: { sft: { line: number; truncation: { kind: string; shortened_payloads: number } } };
}

test("every truncated row keeps the policy, the final request and the target, within max tokens", async () => {
  const directory = qwen3TokenizerDir();
  const template = ChatTemplate.fromDirectory(directory);
  const tokenizer = SegmentTokenizer.fromDirectory(directory);
  const work = mkdtempSync(join(tmpdir(), "toolgym-sft-truncation-"));
  const lines = [...generateTau2Lines({ n: 160, seed: 11 })];
  writeFileSync(join(work, "tau2.jsonl"), `${lines.join("\n")}\n`);
  const maxTokens = 4500;
  const report = await prepareTau2Sft({ input: join(work, "tau2.jsonl"), output: join(work, "out.jsonl"), modelDirectory: directory, maxTokens });
  const rows = readFileSync(join(work, "out.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as OutputRow);

  let truncated = 0;
  let shortened = 0;
  for (const row of rows) {
    const { line, truncation } = row.metadata.sft;
    assert.ok(row.input_ids.length <= maxTokens, `line ${line}: ${row.input_ids.length} tokens`);
    if (truncation.kind === "none") continue;
    truncated++;
    const example = normaliseTau2Line(lines[line - 1]);
    const text = tokenizer.decode(row.input_ids);
    // system policy first and unshortened
    const system = example.context[0];
    assert.equal(system.role, "system");
    assert.ok(text.startsWith(`<|im_start|>system\n${system.content as string}<|im_end|>\n`), `line ${line}: system policy changed`);
    // the final real user request intact
    const query = example.context[lastQueryIndex(example.context)];
    assert.ok(text.includes(`<|im_start|>user\n${query.content as string}<|im_end|>\n`), `line ${line}: final user request changed`);
    // labels cover exactly the target turn: its rendering after the generation prompt, as untruncated
    const prompt = template.render(example.context, { addGenerationPrompt: true });
    const full = template.render([...example.context, example.target], { addGenerationPrompt: false });
    assert.ok(full.startsWith(prompt));
    const labelIds = row.labels.filter((label) => label !== -100);
    assert.equal(tokenizer.decode(labelIds), full.slice(prompt.length), `line ${line}: labels are not the target turn`);
    assert.ok(text.endsWith(full.slice(prompt.length)));
    assert.deepEqual(
      row.assistant_masks,
      row.labels.map((label) => (label === -100 ? 0 : 1)),
    );
    const firstLabel = row.labels.findIndex((label) => label !== -100);
    assert.ok(
      row.labels.slice(firstLabel).every((label) => label !== -100),
      "labels are one contiguous block",
    );
    // shortened payloads keep a head and a tail of an original tool result, around the visible marker
    const originals = example.context.filter((message) => message.role === "tool").map((message) => message.content as string);
    const responses = [...text.matchAll(/<tool_response>\n([\s\S]*?)\n<\/tool_response>/g)].map((match) => match[1]);
    let markers = 0;
    for (const response of responses) {
      const parts = parseTruncatedPayload(response);
      if (!parts) {
        assert.ok(originals.includes(response), `line ${line}: a tool result changed without a marker`);
        continue;
      }
      markers++;
      assert.ok(parts.head.length > 0 && parts.tail.length > 0, "head and tail are kept");
      assert.ok(
        originals.some(
          (original) =>
            original.startsWith(parts.head) && original.endsWith(parts.tail) && parts.head.length + parts.removed + parts.tail.length === original.length,
        ),
        `line ${line}: shortened payload is not head + tail of an original`,
      );
    }
    assert.equal(markers, truncation.shortened_payloads);
    shortened += markers;
  }
  assert.equal(report.truncations.history + report.truncations.payload + report.truncations["history+payload"], truncated);
  assert.ok(truncated >= 30, `only ${truncated} truncated rows`);
  assert.ok(shortened >= 5, `only ${shortened} shortened payloads`);
  assert.equal(report.rows_out + (report.skipped["too-long"] ?? 0), report.rows_in);
});
