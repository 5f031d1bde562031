import { answerTokens, commonTokenCount, normalizeAnswer } from "./normalize.ts";

/**
 * The official MuSiQue answer and support metrics (StonyBrookNLP/musique `metrics/answer.py`,
 * `metrics/support.py`). Golds are `[answer] + answer_aliases`; EM and F1 are maximised over the golds
 * separately, so the two maxima may come from different aliases.
 */

/** `compute_exact`: 1 when the normalized strings are equal. */
export function musiqueExact(gold: string, prediction: string): number {
  return normalizeAnswer(gold) === normalizeAnswer(prediction) ? 1 : 0;
}

/** `compute_f1`: token-bag F1; when either side has no tokens, 1 if both have none, else 0. */
export function musiqueF1(gold: string, prediction: string): number {
  const goldTokens = answerTokens(gold);
  const predictionTokens = answerTokens(prediction);
  if (goldTokens.length === 0 || predictionTokens.length === 0) return goldTokens.length === predictionTokens.length ? 1 : 0;
  const same = commonTokenCount(goldTokens, predictionTokens);
  if (same === 0) return 0;
  const precision = (1.0 * same) / predictionTokens.length;
  const recall = (1.0 * same) / goldTokens.length;
  return (2 * precision * recall) / (precision + recall);
}

/** Per-instance answer scores: `max` EM and `max` F1 over the golds (computed independently). */
export function musiqueAnswerScores(prediction: string, golds: readonly string[]): { em: number; f1: number } {
  let em = 0;
  let f1 = 0;
  for (const gold of golds) {
    em = Math.max(em, musiqueExact(prediction, gold));
    f1 = Math.max(f1, musiqueF1(prediction, gold));
  }
  return { em, f1 };
}

/** `SupportMetric` on sets of paragraph idx; both sets empty gives EM = F1 = 1. */
export function musiqueSupportScores(predicted: readonly number[], gold: readonly number[]): { em: number; f1: number } {
  const predictedSet = new Set(predicted.map((value) => Math.trunc(value)));
  const goldSet = new Set(gold.map((value) => Math.trunc(value)));
  if (predictedSet.size === 0 && goldSet.size === 0) return { em: 1, f1: 1 };
  let truePositives = 0;
  for (const value of predictedSet) if (goldSet.has(value)) truePositives++;
  const falsePositives = predictedSet.size - truePositives;
  const falseNegatives = goldSet.size - truePositives;
  const precision = truePositives + falsePositives > 0 ? (1.0 * truePositives) / (truePositives + falsePositives) : 0;
  const recall = truePositives + falseNegatives > 0 ? (1.0 * truePositives) / (truePositives + falseNegatives) : 0;
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { em: falsePositives + falseNegatives === 0 ? 1 : 0, f1 };
}
