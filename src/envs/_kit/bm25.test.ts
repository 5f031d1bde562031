import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createBm25Index, tokenize } from "./bm25.ts";

// Five documents, query "weather city". Expected scores computed by hand (k1 = 1.2, b = 0.75,
// idf = ln(1 + (N − n + 0.5)/(n + 0.5)), avgdl = 21/5): doc3 has tf 2 for both terms in 4 words.
const corpus = ["sunny weather in the city today", "the city never sleeps", "weather report for the coast", "city weather city weather", "quiet village green"];

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
  });

  it("accepts field documents, filters and limits", () => {
    const index = createBm25Index([{ fields: { name: "Oriveth Calloway", city: "Marrowfield" } }, { text: "Oriveth Galloway" }, "Marrowfield depot"]);
    assert.deepEqual(index.search("marrowfield", { limit: 1 }).length, 1);
    assert.deepEqual(
      index.search("oriveth", { filter: (docIndex) => docIndex !== 0 }).map((hit) => hit.docIndex),
      [1],
    );
    assert.deepEqual(index.search("nothing here"), []);
    assert.deepEqual(index.search("ORIVETH oriveth").length, 2, "repeated query terms count once");
  });

  it("tokenizes on letters and digits", () => {
    assert.deepEqual(tokenize("PX-44712, Oriveth's 2023-04-17"), ["px", "44712", "oriveth", "s", "2023", "04", "17"]);
  });
});
