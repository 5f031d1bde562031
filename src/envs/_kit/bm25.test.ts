import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { createRandom } from "../../core/index.ts";
import { createBm25Index, indexedTokens, tokenize, type Bm25Hit } from "./bm25.ts";

// Five documents, query "weather city". Expected scores computed by hand (k1 = 1.2, b = 0.75,
// idf = ln(1 + (N − n + 0.5)/(n + 0.5)), avgdl = 21/5): doc3 has tf 2 for both terms in 4 words.
const corpus = ["sunny weather in the city today", "the city never sleeps", "weather report for the coast", "city weather city weather", "quiet village green"];

/** The textbook definitions, written independently of `bm25.ts`. */
function referenceTokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * Textbook Okapi BM25: a document's score sums, over the distinct query terms in query order,
 * idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · |d| / avgdl)); the same operations in the same order as
 * the index, so scores must be equal to the last bit. Hits with a positive score, best first, ties by
 * document order.
 */
function referenceSearch(documents: readonly string[], query: string, k1 = 1.2, b = 0.75): Bm25Hit[] {
  const bags = documents.map((document) => {
    const counts = new Map<string, number>();
    for (const term of referenceTokens(document)) counts.set(term, (counts.get(term) ?? 0) + 1);
    return counts;
  });
  const lengths = documents.map((document) => referenceTokens(document).length);
  const averageLength = lengths.reduce((sum, length) => sum + length, 0) / documents.length;
  const queryTerms = [...new Set(referenceTokens(query))];
  const containing = new Map(queryTerms.map((term) => [term, bags.filter((bag) => bag.has(term)).length]));
  const hits: Bm25Hit[] = [];
  bags.forEach((bag, docIndex) => {
    let score = 0;
    for (const term of queryTerms) {
      const frequency = bag.get(term);
      if (frequency === undefined) continue;
      const n = containing.get(term) as number;
      const idf = Math.log(1 + (documents.length - n + 0.5) / (n + 0.5));
      score += (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b + (b * (lengths[docIndex] as number)) / averageLength));
    }
    if (score > 0) hits.push({ docIndex, score });
  });
  return hits.sort((left, right) => right.score - left.score || left.docIndex - right.docIndex);
}

/** Characters where a hand-written tokenizer tends to part from `toLowerCase().match(/[\p{L}\p{N}]+/gu)`. */
const PIECES = [
  ..."aZq7 -,()\"'.:^`_/\n\t",
  "Mountrail",
  "ABC",
  "x9",
  "  ",
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
  const random = createRandom("bm25", seed);
  return Array.from({ length: pieces }, () => random.pick(PIECES)).join("");
}

/** Every string in the shipped MuSiQue and 2Wiki sample files: real text, ASCII and Unicode (≈ 1,000 paragraphs). */
function sampleTexts(): string[] {
  const texts: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === "string") texts.push(value);
    else if (Array.isArray(value)) value.forEach(collect);
    else if (value && typeof value === "object") Object.values(value).forEach(collect);
  };
  const directory = new URL("../../../assets/multihop/", import.meta.url);
  collect(JSON.parse(readFileSync(new URL("2wiki_dev_sample.json", directory), "utf8")));
  for (const line of readFileSync(new URL("musique_dev_sample.jsonl", directory), "utf8").split("\n")) if (line.trim()) collect(JSON.parse(line));
  return texts;
}

function assertMatchesReference(documents: string[], queries: string[]): void {
  const index = createBm25Index(documents);
  for (const query of queries) {
    const expected = referenceSearch(documents, query);
    assert.deepEqual(index.search(query), expected, query);
    assert.deepEqual(index.search(query, { limit: 3 }), expected.slice(0, 3), query);
    const odd = (docIndex: number) => docIndex % 2 === 1;
    assert.deepEqual(
      index.search(query, { filter: odd }),
      expected.filter((hit) => odd(hit.docIndex)),
      query,
    );
  }
}

describe("bm25", () => {
  it("matches hand-computed Okapi BM25 scores", () => {
    const index = createBm25Index(corpus);
    const hits = index.search("weather city");
    assert.deepEqual(
      hits.map((hit) => hit.docIndex),
      [3, 0, 1, 2],
    );
    const expected = [1.5211, 0.9384, 0.5598, 0.5105];
    hits.forEach((hit, position) => assert.ok(Math.abs(hit.score - (expected[position] as number)) < 5e-5, `doc ${hit.docIndex}: ${hit.score}`));
    assert.ok(Math.abs(index.idf("city") - Math.log(1 + 2.5 / 3.5)) < 1e-12);
    assert.equal(index.score("weather city", 4), 0);
    assert.equal(index.score("weather city", 3), hits[0]?.score);
  });

  it("accepts field documents, filters and limits", () => {
    const index = createBm25Index([
      { fields: { name: "Oriveth Calloway", city: "Marrowfield", code: 4471 } },
      { text: "Oriveth Galloway" },
      "Marrowfield depot",
      ["Oriveth", "4471"],
    ]);
    assert.deepEqual(index.search("marrowfield", { limit: 1 }).length, 1);
    assert.deepEqual(
      index.search("oriveth", { filter: (docIndex) => docIndex !== 0 }).map((hit) => hit.docIndex),
      [1, 3],
    );
    assert.deepEqual(
      index.search("4471").map((hit) => hit.docIndex),
      [3, 0],
    );
    assert.deepEqual(index.search("nothing here"), []);
    assert.deepEqual(index.search("ORIVETH oriveth").length, 3, "repeated query terms count once");
  });

  it("handles empty documents, empty queries, repeated terms, unseen terms and an empty corpus", () => {
    const index = createBm25Index(["", "alpha beta", "Alpha ALPHA gamma"]);
    assert.deepEqual(index.search(""), []);
    assert.deepEqual(
      index.search("alpha alpha").map((hit) => hit.docIndex),
      [2, 1],
    );
    assert.equal(index.idf("delta"), 0);
    assert.deepEqual(createBm25Index([]).search("alpha"), []);
  });

  it("uses k1 and b when given", () => {
    const index = createBm25Index(corpus, { k1: 2, b: 0.3 });
    assert.deepEqual([index.k1, index.b], [2, 0.3]);
    assert.deepEqual(index.search("weather city"), referenceSearch(corpus, "weather city", 2, 0.3));
  });

  it("tokenizes on letters and digits", () => {
    assert.deepEqual(tokenize("PX-44712, Oriveth's 2023-04-17"), ["px", "44712", "oriveth", "s", "2023", "04", "17"]);
  });

  it("indexes the reference tokens on ASCII, punctuation and tricky Unicode (final sigma, İ, combining marks, surrogates)", () => {
    for (let seed = 0; seed < 400; seed++) {
      const text = randomText(seed, 1 + (seed % 40));
      assert.deepEqual(indexedTokens(text), referenceTokens(text), JSON.stringify(text));
      assert.deepEqual(tokenize(text), referenceTokens(text), JSON.stringify(text));
    }
    for (const text of ["ΑΣ.a", "ΑΣ a", "ΑΣ'Σ", "İstanbul", "naïve's café–bar", "x".repeat(70_000) + " Éé", "ǅemal ǅ", ""]) {
      assert.deepEqual(indexedTokens(text), referenceTokens(text), text.slice(0, 40));
    }
    for (let seed = 0; seed < 50; seed++) {
      const fields = [randomText(seed, 6), randomText(seed + 1000, 30)];
      assert.deepEqual(indexedTokens(fields), referenceTokens(fields.join(" ")), "fields are tokenized as if joined by a space");
    }
  });

  it("ranks and scores like the reference on the multihop sample texts (large vocabulary), ASCII and Unicode queries", () => {
    const documents = sampleTexts();
    assert.ok(documents.length > 1000, `${documents.length} sample texts`);
    const queries = [
      "Mountrail County seat",
      "Pál Gábor film director",
      "FORBIDDEN ground 1968",
      "Émile Zola novel",
      "the of and",
      "no-such-term-xyz",
      documents[123]?.slice(0, 120) as string,
    ];
    assertMatchesReference(documents, queries);
    const index = createBm25Index(documents);
    for (const term of ["the", "county", "gábor", "1968", "absent"]) {
      const n = documents.filter((document) => referenceTokens(document).includes(term)).length;
      assert.equal(index.idf(term), n === 0 ? 0 : Math.log(1 + (documents.length - n + 0.5) / (n + 0.5)), term);
    }
  });

  it("gives each of many small indexes built in a row its own terms (reused scratch space)", () => {
    for (let seed = 0; seed < 60; seed++) {
      const documents = Array.from({ length: 1 + (seed % 12) }, (_, index) => randomText(seed * 100 + index, 5 + ((seed * index) % 80)));
      assertMatchesReference(documents, [randomText(seed + 7, 8), documents[0] as string, "a z q 7 mountrail é σ"]);
    }
  });
});
