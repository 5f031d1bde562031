import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createBm25Index } from "../_kit/bm25.ts";
import { CompactBm25 } from "./compact-bm25.ts";
import { loadDataset, resolveDataSource } from "./dataset.ts";

describe("compact BM25 (same ranking and scores as src/envs/_kit/bm25.ts)", () => {
  it("matches the kit's index on the pooled sample paragraphs, ASCII and Unicode queries", () => {
    const documents = [...loadDataset(resolveDataSource("musique", {})).examples, ...loadDataset(resolveDataSource("2wiki", {})).examples].flatMap((example) =>
      example.paragraphs.map((paragraph) => `${paragraph.title} ${paragraph.text}`),
    );
    const kit = createBm25Index(documents);
    const compact = new CompactBm25(documents);
    const queries = [
      "Mountrail County seat",
      "Pál Gábor film director",
      "FORBIDDEN ground 1968",
      "Émile Zola novel",
      "the of and",
      "no-such-term-xyz",
      documents[123]?.slice(0, 120) as string,
    ];
    for (const query of queries) {
      assert.deepEqual(compact.search(query, { limit: 20 }), kit.search(query, { limit: 20 }), query);
      assert.equal(compact.score(query, 5), kit.score(query, 5));
    }
    assert.equal(compact.idf("county"), kit.idf("county"));
  });

  it("handles empty documents, empty queries and repeated terms", () => {
    const compact = new CompactBm25(["", "alpha beta", "Alpha ALPHA gamma"]);
    assert.deepEqual(compact.search(""), []);
    assert.deepEqual(
      compact.search("alpha alpha").map((hit) => hit.docIndex),
      [2, 1],
    );
    assert.deepEqual(new CompactBm25([]).search("alpha"), []);
  });
});
