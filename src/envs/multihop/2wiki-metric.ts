import { commonTokenCount, normalizeAnswer, pythonSplit, removePunctuation } from "./normalize.ts";

/**
 * The official 2WikiMultihopQA v1.1 metrics (Alab-NII/2wikimultihop `2wikimultihop_evaluate_v1.1.py`):
 * answer EM/F1/precision/recall with the yes/no/noanswer rule, supporting facts, evidence triples.
 */
export interface WikiAnswerScores {
  em: number;
  f1: number;
  prec: number;
  recall: number;
}

const SPECIAL_ANSWERS = new Set(["yes", "no", "noanswer"]);

/** `f1_score` + `exact_match_score` for one gold. No token overlap (including both empty) gives F1 0. */
export function wikiAnswerScoresForGold(prediction: string, gold: string): WikiAnswerScores {
  const normalizedPrediction = normalizeAnswer(prediction);
  const normalizedGold = normalizeAnswer(gold);
  const em = normalizedPrediction === normalizedGold ? 1 : 0;
  const zero = { em, f1: 0, prec: 0, recall: 0 };
  if (SPECIAL_ANSWERS.has(normalizedPrediction) && normalizedPrediction !== normalizedGold) return zero;
  if (SPECIAL_ANSWERS.has(normalizedGold) && normalizedPrediction !== normalizedGold) return zero;
  const predictionTokens = normalizedPrediction === "" ? [] : normalizedPrediction.split(" ");
  const goldTokens = normalizedGold === "" ? [] : normalizedGold.split(" ");
  const same = commonTokenCount(predictionTokens, goldTokens);
  if (same === 0) return zero;
  const prec = (1.0 * same) / predictionTokens.length;
  const recall = (1.0 * same) / goldTokens.length;
  return { em, f1: (2 * prec * recall) / (prec + recall), prec, recall };
}

/** `update_answer`: em, f1, prec and recall are each maximised over the golds independently. */
export function wikiAnswerScores(prediction: string, golds: Iterable<string>): WikiAnswerScores {
  const best = { em: 0, f1: 0, prec: 0, recall: 0 };
  for (const gold of golds) {
    const scores = wikiAnswerScoresForGold(prediction, gold);
    best.em = Math.max(best.em, scores.em);
    best.f1 = Math.max(best.f1, scores.f1);
    best.prec = Math.max(best.prec, scores.prec);
    best.recall = Math.max(best.recall, scores.recall);
  }
  return best;
}

/** The gold answer set of v1.1: `{answer}` plus the aliases and demonyms of `answer_id`, when any. */
export function wikiGoldAnswers(answer: string, answerId: string | null | undefined, aliases: ReadonlyMap<string, ReadonlySet<string>> | undefined): string[] {
  const golds = new Set([answer]);
  const extra = answerId === null || answerId === undefined ? undefined : aliases?.get(answerId);
  if (extra && extra.size > 0) for (const alias of extra) golds.add(alias);
  return [...golds];
}

/** A Python tuple built with `tuple(x)`: strings become their characters, lists their items. */
type PythonTuple = unknown[];

function pythonTuple(value: unknown, what: string): PythonTuple {
  if (typeof value === "string") return Array.from(value);
  if (Array.isArray(value)) return [...value];
  throw new TypeError(`${what} must be a list (got ${value === null ? "null" : typeof value}); the official scorer fails on it too`);
}

/** A hashable key for a tuple; Python compares True == 1 and 0 == 0.0, lists are unhashable. */
function tupleKey(tuple: PythonTuple, what: string): string {
  return JSON.stringify(
    tuple.map((item) => {
      if (Array.isArray(item) || (typeof item === "object" && item !== null))
        throw new TypeError(`${what} holds a nested list; the official scorer fails with "unhashable type"`);
      return typeof item === "boolean" ? Number(item) : item;
    }),
  );
}

/** `update_sp`: dedupe the raw tuples, lowercase titles, then count list membership (no empty special case). */
export function wikiSupportScores(predicted: unknown[], gold: unknown[]): WikiAnswerScores {
  const lowered = (items: unknown[], what: string): string[] => {
    const unique = new Map<string, PythonTuple>();
    for (const item of items) {
      const tuple = pythonTuple(item, what);
      unique.set(tupleKey(tuple, what), tuple);
    }
    return [...unique.values()].map((tuple) => {
      const copy = [...tuple];
      if (typeof copy[0] !== "string")
        throw new TypeError(`${what}: each item must be [title, sent_id] with a string title; the official scorer fails on it too`);
      copy[0] = copy[0].toLowerCase();
      return tupleKey(copy, what);
    });
  };
  const predictedKeys = lowered(predicted, "sp prediction");
  const goldKeys = lowered(gold, "gold supporting_facts");
  const goldSet = new Set(goldKeys);
  const predictedSet = new Set(predictedKeys);
  let truePositives = 0;
  let falsePositives = 0;
  let falseNegatives = 0;
  for (const key of predictedKeys) {
    if (goldSet.has(key)) truePositives++;
    else falsePositives++;
  }
  for (const key of goldKeys) if (!predictedSet.has(key)) falseNegatives++;
  const prec = truePositives + falsePositives > 0 ? (1.0 * truePositives) / (truePositives + falsePositives) : 0;
  const recall = truePositives + falseNegatives > 0 ? (1.0 * truePositives) / (truePositives + falseNegatives) : 0;
  const f1 = prec + recall > 0 ? (2 * prec * recall) / (prec + recall) : 0;
  return { em: falsePositives + falseNegatives === 0 ? 1 : 0, f1, prec, recall };
}

/** `normalize_evi` on one string: lowercase, ASCII punctuation removed, whitespace collapsed; no articles. */
function normalizeEvidenceText(text: string): string {
  return pythonSplit(removePunctuation(text.toLowerCase())).join(" ");
}

/** `recurse` of `normalize_evi`: strings are normalized, lists recursed into, anything else fails. */
function normalizeEvidence(value: unknown): unknown {
  if (typeof value === "string") return normalizeEvidenceText(value);
  if (Array.isArray(value)) return value.map(normalizeEvidence);
  throw new TypeError(`evidence must hold only lists and strings (got ${value === null ? "null" : typeof value}); the official scorer fails on it too`);
}

export interface GoldEvidence {
  evidences: Array<[string, string, string]>;
  evidencesId: Array<[string, string, string]>;
}

/** Gold triple variants: the product of subject and object aliases from `evidences_id` (v1.1). */
export function wikiGoldEvidenceVariants(gold: GoldEvidence, aliases: ReadonlyMap<string, ReadonlySet<string>> | undefined): string[][][] {
  return gold.evidences.map(([subject, relation, object], position) => {
    const subjects = new Set([subject]);
    const objects = new Set([object]);
    if (gold.evidencesId.length > 0) {
      const ids = gold.evidencesId[position];
      if (!ids || gold.evidencesId.length !== gold.evidences.length)
        throw new TypeError("evidences_id and evidences differ in length (the official scorer asserts they match)");
      for (const alias of aliases?.get(ids[0]) ?? []) subjects.add(alias);
      for (const alias of aliases?.get(ids[2]) ?? []) objects.add(alias);
    }
    const variants: string[][] = [];
    for (const s of subjects) for (const o of objects) variants.push([s, relation, o]);
    return variants;
  });
}

/** `update_evi`: a predicted triple matches when it is one of the variants of any gold triple. */
export function wikiEvidenceScores(predicted: unknown[], goldVariants: string[][][]): WikiAnswerScores {
  if (!Array.isArray(predicted)) throw new TypeError("an evidence prediction must be a list of [subject, relation, object] triples");
  const predictedKeys = new Set(
    (normalizeEvidence(predicted) as unknown[]).map((item) => tupleKey(pythonTuple(item, "evidence prediction"), "evidence prediction")),
  );
  const goldSets = goldVariants.map((variants) => new Set(variants.map((triple) => tupleKey(normalizeEvidence(triple) as unknown[], "gold evidence"))));
  let matches = 0;
  for (const key of predictedKeys) {
    if (goldSets.some((variants) => variants.has(key))) matches++;
  }
  const prec = predictedKeys.size === 0 ? 0 : matches / predictedKeys.size;
  const recall = goldSets.length === 0 ? 0 : matches / goldSets.length;
  const f1 = prec + recall > 0 ? (2 * prec * recall) / (prec + recall) : 0;
  return { em: matches === predictedKeys.size && predictedKeys.size === goldSets.length ? 1 : 0, f1, prec, recall };
}
