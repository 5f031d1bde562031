import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { wikiAnswerScores, wikiEvidenceScores, wikiGoldAnswers, wikiGoldEvidenceVariants, wikiSupportScores } from "./2wiki-metric.ts";
import { MULTIHOP_FIXTURES } from "./fixtures.ts";
import { musiqueAnswerScores, musiqueSupportScores } from "./musique-metric.ts";
import { normalizeAnswer, pythonSplit } from "./normalize.ts";
import { formatOfficialOutput } from "./score-files.ts";

interface MetricCases {
  cases: {
    musique: Array<{ id: string; variant: string; prediction: string; golds: string[]; em: number; f1: number }>;
    "2wiki": Array<{ _id: string; variant: string; prediction: string; golds: string[]; em: number; f1: number; prec: number; recall: number }>;
  };
  normalization_probes: Array<{ input: string; musique_normalize: string; "2wiki_normalize": string }>;
}

const fixture = JSON.parse(readFileSync(join(MULTIHOP_FIXTURES, "metric_cases.json"), "utf8")) as MetricCases;

/** Exact for 0/1 and integer zeros; 1e-12 for other floats (the fixture README's tolerance). */
function assertScore(actual: number, expected: number, label: string): void {
  if (expected === 0 || expected === 1) assert.equal(actual, expected, label);
  else assert.ok(Math.abs(actual - expected) <= 1e-12, `${label}: ${actual} ≠ ${expected}`);
}

describe("official answer metrics (metric_cases.json)", () => {
  it("normalizes every probe exactly as both official normalize_answer functions", () => {
    assert.equal(fixture.normalization_probes.length, 15);
    for (const probe of fixture.normalization_probes) {
      assert.equal(normalizeAnswer(probe.input), probe.musique_normalize, JSON.stringify(probe.input));
      assert.equal(normalizeAnswer(probe.input), probe["2wiki_normalize"], JSON.stringify(probe.input));
    }
  });

  it("reproduces all 152 MuSiQue cases (max EM and max F1 over answer + aliases)", () => {
    assert.equal(fixture.cases.musique.length, 152);
    for (const item of fixture.cases.musique) {
      const scores = musiqueAnswerScores(item.prediction, item.golds);
      assertScore(scores.em, item.em, `${item.id}/${item.variant} em`);
      assertScore(scores.f1, item.f1, `${item.id}/${item.variant} f1`);
    }
  });

  it("reproduces all 140 2Wiki cases (em, f1, prec, recall each maximised)", () => {
    assert.equal(fixture.cases["2wiki"].length, 140);
    for (const item of fixture.cases["2wiki"]) {
      const scores = wikiAnswerScores(item.prediction, item.golds);
      for (const key of ["em", "f1", "prec", "recall"] as const) assertScore(scores[key], item[key], `${item._id}/${item.variant} ${key}`);
    }
  });

  it("differs where the two official scorers differ: both-empty F1 and the yes/no rule", () => {
    assert.deepEqual(musiqueAnswerScores("", ["The"]), { em: 1, f1: 1 });
    assert.deepEqual(wikiAnswerScores("", ["The"]), { em: 1, f1: 0, prec: 0, recall: 0 });
    assert.equal(musiqueAnswerScores("yes it is", ["yes"]).f1, (2 * (1 / 3)) / (1 / 3 + 1));
    assert.equal(wikiAnswerScores("yes it is", ["yes"]).f1, 0);
    assert.equal(wikiAnswerScores("no", ["no way"]).f1, 0);
  });

  it("never rewards containment: a dump of candidates scores far below 1", () => {
    const dump = "Stanley, Mountrail County, Port Blair, Australia, North Dakota, Bismarck";
    assert.equal(musiqueAnswerScores(dump, ["Stanley"]).em, 0);
    assert.ok(musiqueAnswerScores(dump, ["Stanley"]).f1 < 0.2);
    assert.ok(wikiAnswerScores(dump, ["Stanley"]).f1 < 0.2);
  });

  it("takes EM and F1 maxima from different aliases independently", () => {
    // "york city" matches no gold exactly (EM 0) but overlaps "New York City" (F1 0.8); 2Wiki takes prec and recall from different golds.
    const scores = musiqueAnswerScores("york city", ["New York City", "NYC"]);
    assert.equal(scores.em, 0);
    assert.equal(scores.f1, 0.8);
    const wiki = wikiAnswerScores("new york city hall", ["New York City", "hall"]);
    assert.equal(wiki.prec, 0.75);
    assert.equal(wiki.recall, 1);
  });

  it("splits like Python str.split and keeps non-ASCII punctuation", () => {
    assert.deepEqual(pythonSplit("a\u001cb\u0085c\ufeffd"), ["a", "b", "c\ufeffd"]);
    assert.equal(normalizeAnswer("Stanley’"), "stanley’");
    assert.equal(normalizeAnswer("x²a"), "x²a");
    assert.equal(normalizeAnswer("Ça a"), "ça");
  });
});

describe("official support and evidence metrics", () => {
  it("MuSiQue support: set P/R/F1, both empty gives 1", () => {
    assert.deepEqual(musiqueSupportScores([], []), { em: 1, f1: 1 });
    assert.deepEqual(musiqueSupportScores([1, 8], [8, 1]), { em: 1, f1: 1 });
    assert.equal(musiqueSupportScores([0, 1], [1, 8]).f1, 0.5);
  });

  it("2Wiki sp: lowercased titles, both empty gives F1 0 and EM 1", () => {
    assert.deepEqual(wikiSupportScores([], []), { em: 1, f1: 0, prec: 0, recall: 0 });
    assert.deepEqual(wikiSupportScores([["FREE GUY", 0]], [["Free Guy", 0]]), { em: 1, f1: 1, prec: 1, recall: 1 });
    assert.equal(wikiSupportScores([["", 0]], [["Free Guy", 0]]).f1, 0);
  });

  it("2Wiki evidence: alias variants count, ircot's dummy ['', '', ''] scores 0", () => {
    const aliases = new Map([["Q2", new Set(["Henry the First"])]]);
    const variants = wikiGoldEvidenceVariantsFor(aliases);
    assert.deepEqual(wikiEvidenceScores([["Matilda of Brabant", "father", "henry the first"]], variants), { em: 1, f1: 1, prec: 1, recall: 1 });
    assert.deepEqual(wikiEvidenceScores(["", "", ""], variants), { em: 0, f1: 0, prec: 0, recall: 0 });
    assert.deepEqual(wikiGoldAnswers("Henry I", "Q2", aliases).sort(), ["Henry I", "Henry the First"]);
  });
});

function wikiGoldEvidenceVariantsFor(aliases: Map<string, Set<string>>): string[][][] {
  return wikiGoldEvidenceVariants({ evidences: [["Matilda of Brabant", "father", "Henry I"]], evidencesId: [["Q1", "father", "Q2"]] }, aliases);
}

describe("official output", () => {
  it("prints the metrics as json.dumps(indent=4): floats as repr, the int 0 as an int", () => {
    const result = {
      dataset: "musique" as const,
      n: 1,
      metrics: { em: { value: 27.5 }, sp: { value: 100 }, f1: { value: 0, isInteger: true } },
      messages: [],
      notes: [],
    };
    assert.equal(formatOfficialOutput(result), '{\n    "em": 27.5,\n    "sp": 100.0,\n    "f1": 0\n}');
  });
});
