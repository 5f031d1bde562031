import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRandom } from "../../core/index.ts";
import { createBm25Index, tokenize } from "../_kit/bm25.ts";
import { CompactBm25 } from "./compact-bm25.ts";
import { compactTokens } from "./compact-terms.ts";
import { loadDataset, resolveDataSource } from "./dataset.ts";

/** Characters where a hand-written tokenizer tends to part from `toLowerCase().match(/[\p{L}\p{N}]+/gu)`. */
const PIECES = [
  "a",
  "Z",
  "q",
  "7",
  "Mountrail",
  "ABC",
  "x9",
  " ",
  "  ",
  "\n",
  "\t",
  "-",
  ",",
  "(",
  ")",
  '"',
  "'",
  ".",
  ":",
  "^",
  "`",
  "_",
  "/",
  "é",
  "Émile",
  "ß",
  "Σ",
  "ΑΣ",
  "σ",
  "İ",
  "ǅ",
  "\u0301",
  "\u00a0",
  "–",
  "—",
  "’",
  "😀",
  "𝐀",
  "\ud800",
  "Ⅻ",
  "٣",
  "日本",
  "ﬁ",
];

function randomText(seed: number, pieces: number): string {
  const random = createRandom("compact-bm25", seed);
  return Array.from({ length: pieces }, () => random.pick(PIECES)).join("");
}

function assertSameIndex(documents: string[], queries: string[]): void {
  const kit = createBm25Index(documents);
  const compact = new CompactBm25(documents);
  for (const query of queries) {
    assert.deepEqual(compact.search(query, { limit: 20 }), kit.search(query, { limit: 20 }), query);
    for (const term of tokenize(query)) assert.equal(compact.idf(term), kit.idf(term), term);
  }
}

describe("compact BM25 (same tokens, ranking and scores as src/envs/_kit/bm25.ts)", () => {
  it("tokenizes exactly like the kit on ASCII, punctuation and tricky Unicode (final sigma, İ, combining marks, surrogates)", () => {
    for (let seed = 0; seed < 400; seed++) {
      const text = randomText(seed, 1 + (seed % 40));
      assert.deepEqual(compactTokens(text), tokenize(text), JSON.stringify(text));
    }
    for (const text of ["ΑΣ.a", "ΑΣ a", "ΑΣ'Σ", "İstanbul", "naïve's café–bar", "x".repeat(70_000) + " Éé", "ǅemal ǅ", ""]) {
      assert.deepEqual(compactTokens(text), tokenize(text), text.slice(0, 40));
    }
  });

  it("indexes fields as if joined by a space", () => {
    for (let seed = 0; seed < 50; seed++) {
      const fields = [randomText(seed, 6), randomText(seed + 1000, 30)];
      assert.deepEqual(compactTokens(fields), tokenize(fields.join(" ")));
    }
  });

  it("matches the kit's index on the pooled sample paragraphs, ASCII and Unicode queries", () => {
    const documents = [...loadDataset(resolveDataSource("musique", {})).examples, ...loadDataset(resolveDataSource("2wiki", {})).examples].flatMap((example) =>
      example.paragraphs.map((paragraph) => `${paragraph.title} ${paragraph.text}`),
    );
    const queries = [
      "Mountrail County seat",
      "Pál Gábor film director",
      "FORBIDDEN ground 1968",
      "Émile Zola novel",
      "the of and",
      "no-such-term-xyz",
      documents[123]?.slice(0, 120) as string,
    ];
    assertSameIndex(documents, queries);
    const kit = createBm25Index(documents);
    const compact = new CompactBm25(documents);
    assert.equal(compact.score(queries[0] as string, 5), kit.score(queries[0] as string, 5));
  });

  it("gives each of many small indexes built in a row its own terms (reused scratch space)", () => {
    for (let seed = 0; seed < 60; seed++) {
      const documents = Array.from({ length: 1 + (seed % 12) }, (_, index) => randomText(seed * 100 + index, 5 + ((seed * index) % 80)));
      assertSameIndex(documents, [randomText(seed + 7, 8), documents[0] as string, "a z q 7 mountrail é σ"]);
    }
  });

  it("handles empty documents, empty queries, repeated terms and unseen terms", () => {
    const compact = new CompactBm25(["", "alpha beta", "Alpha ALPHA gamma"]);
    assert.deepEqual(compact.search(""), []);
    assert.deepEqual(
      compact.search("alpha alpha").map((hit) => hit.docIndex),
      [2, 1],
    );
    assert.equal(compact.idf("delta"), 0);
    assert.deepEqual(new CompactBm25([]).search("alpha"), []);
  });
});
