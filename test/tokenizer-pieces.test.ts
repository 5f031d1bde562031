// SegmentTokenizer's piece cache (src/data/tokenizer.ts): for the Qwen tokenizer it splits a segment with the
// pre-tokenizer's regex and encodes each distinct piece once. The ids must equal whole-string encoding by
// @huggingface/tokenizers (itself held equal to Python transformers by test/sft-crosscheck.test.ts) on
// rendered rows, on hand-picked Unicode edge cases and on random strings built from them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRandom } from "../src/core/random.ts";
import { ChatTemplate } from "../src/data/chat-template.ts";
import { normaliseTau2Line } from "../src/data/sft/tau2-record.ts";
import { generateTau2Lines } from "../src/data/synth/generate.ts";
import { SegmentTokenizer } from "../src/data/tokenizer.ts";
import { qwen3TokenizerDir } from "./support/qwen3.ts";

const directory = qwen3TokenizerDir();

/** A fresh tokenizer per check, so every encode goes through the piece path rather than a cached segment. */
function fresh(): SegmentTokenizer {
  return SegmentTokenizer.fromDirectory(directory);
}

const edgeCases = [
  "don't STOP'S we'Re I'M they'LL he'D you'VE",
  "x\u00a0\u3000y \ufeffz\u2028\u2029\u0085w",
  "e\u0301 \u0301x A\u030a\u0323 \uac00\u11a8 \u1100\u1161",
  "  \n\n  foo\r\n\tbar  \n \n x   ",
  "123456 \u0661\u0662\u0663 \u2167 \u00bd",
  "\u{1f469}\u200d\u{1f469}\u200d\u{1f467} \u4e2d\u6587 \u{1f600}\u{1f600}",
  '{"a": [1, 2.5e-3, null], "b": "\\u00e9"}',
  "\t\t\t\n\n\n\r\r   \u000b\u000c",
  "trailing spaces   ",
  "",
];

const alphabet = [
  ..."aZ' \n\r\t.,!?-_0123456789",
  "\u00a0",
  "\u3000",
  "\ufeff",
  "\u0301",
  "\u0323",
  "\u00e9",
  "\u4e2d",
  "\u{1f600}",
  "\u200d",
  "\u0661",
  "'s",
  "'LL",
];

describe("the piece cache", () => {
  it("is on for the Qwen tokenizer, with the pattern @huggingface/tokenizers compiles", () => {
    const tokenizer = fresh() as unknown as { pieces?: unknown; tokenizer: { pre_tokenizer: { tokenizers: { pattern: RegExp }[] } } };
    assert.ok(tokenizer.pieces instanceof Map);
    // the translation in tokenizer.ts must stay the library's: a library upgrade that changes it fails here
    const library = String(tokenizer.tokenizer.pre_tokenizer.tokenizers[0]!.pattern);
    assert.equal(
      library,
      String(
        /(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\p{White_Space}\p{L}\p{N}]+[\r\n]*|\p{White_Space}*[\r\n]+|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+/gu,
      ),
    );
  });

  it("encodes Unicode edge cases exactly like whole-string encoding", () => {
    const tokenizer = fresh();
    for (const text of edgeCases) assert.deepEqual(tokenizer.encode(text), tokenizer.encodeUncached(text), JSON.stringify(text));
  });

  it("encodes 3,000 random strings of edge-case characters exactly like whole-string encoding", () => {
    const random = createRandom("tokenizer-pieces");
    const tokenizer = fresh();
    for (let index = 0; index < 3000; index++) {
      const parts = Array.from({ length: random.integer(1, 40) }, () => random.pick(alphabet));
      const text = parts.join("");
      assert.deepEqual(tokenizer.encode(text), tokenizer.encodeUncached(text), JSON.stringify(text));
    }
  });

  it("encodes 200 rendered synthetic Tau2 rows exactly like whole-string encoding", () => {
    const template = ChatTemplate.fromDirectory(directory);
    const tokenizer = fresh();
    for (const line of generateTau2Lines({ n: 200, seed: 11 })) {
      const example = normaliseTau2Line(line);
      const text = template.render([...example.context, example.target]);
      assert.deepEqual(tokenizer.encode(text), tokenizer.encodeUncached(text));
    }
  });
});
