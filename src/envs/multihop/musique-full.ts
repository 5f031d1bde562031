import { scoreComponents, type BenchmarkSummary, type RewardBreakdown, type SummaryEpisode } from "../../core/index.ts";
import { normalizeAnswer } from "./normalize.ts";
import { pythonFloatRepr, pythonRound } from "../../python-semantics/index.ts";

/**
 * MuSiQue-Full in the environment: the "unanswerable" answer, the answerability-gated reward and the
 * run summary with the official metrics of `evaluate_v1.0.py` (answer_f1, answer_em, support_f1 and,
 * on Full data, group_answer_sufficiency_f1 and group_support_sufficiency_f1).
 */

/** The answer text that means "unanswerable" (any case; punctuation and articles ignored, as the metric does). */
export function isUnanswerableText(answer: string): boolean {
  return normalizeAnswer(answer) === "unanswerable";
}

/**
 * MuSiQue-Full reward. The official answer F1/EM (which ignore the predicted answerability) exist only
 * for answerable questions, so unanswerable episodes leave them out and run means stay the official
 * answer_f1/answer_em. `answerable_correct` is the per-question half of the official sufficiency check;
 * the total gates the answer on it, the per-question counterpart of group_answer_sufficiency_f1.
 */
export function fullReward(
  goldAnswerable: boolean,
  predictedAnswerable: boolean | null,
  scores: { em: number; f1: number },
  supporting: () => number,
): RewardBreakdown {
  const correct = predictedAnswerable !== null && predictedAnswerable === goldAnswerable ? 1 : 0;
  const { values, errors } = scoreComponents(
    goldAnswerable
      ? {
          f1: () => scores.f1,
          em: () => scores.em,
          answerable_correct: () => correct,
          answer_sufficiency_f1: () => (correct ? scores.f1 : 0),
          supporting_read: supporting,
        }
      : { answerable_correct: () => correct, answer_sufficiency_f1: () => correct },
  );
  return {
    total: values.answer_sufficiency_f1 ?? null,
    components: values,
    formula: goldAnswerable
      ? "answer_sufficiency_f1 = f1 if the agent called the question answerable, else 0 (f1, em, answerable_correct, supporting_read reported)"
      : "answer_sufficiency_f1 = 1 if the agent answered 'unanswerable', else 0 (answerable_correct reported)",
    errors,
    diagnostics: {},
  };
}

interface Line {
  id: string;
  position: number;
  goldAnswerable: boolean;
  predictedAnswerable: boolean | null;
  f1: number;
  em: number;
  supportF1: number;
}

function lineOf(episode: SummaryEpisode): Line | undefined {
  const diagnostics = episode.diagnostics ?? {};
  const { example_id: id, position, gold_answerable: gold, predicted_answerable: predicted } = diagnostics;
  if (typeof id !== "string" || typeof position !== "number" || typeof gold !== "boolean") return undefined;
  return {
    id,
    position,
    goldAnswerable: gold,
    predictedAnswerable: typeof predicted === "boolean" ? predicted : null,
    f1: episode.metrics.f1 ?? 0,
    em: episode.metrics.em ?? 0,
    supportF1: episode.metrics.support_f1 ?? 0,
  };
}

/**
 * The official numbers of a run, computed as `evaluate_v1.0.py` computes them on the run's exported
 * predictions (one line per data-file line; a repeated line keeps its first sample; sums in file order):
 * means over answerable lines, and on Full data the group metrics over ids whose two lines both ran.
 * Support is the paragraphs the agent read. Values are Python's round(x, 3).
 */
export function summarizeMusique(episodes: readonly SummaryEpisode[]): BenchmarkSummary {
  const byPosition = new Map<number, Line>();
  for (const episode of episodes) {
    const line = lineOf(episode);
    if (line && !byPosition.has(line.position)) byPosition.set(line.position, line);
  }
  const lines = [...byPosition.values()].sort((left, right) => left.position - right.position);
  const answerable = lines.filter((line) => line.goldAnswerable);
  const mean = (values: number[]) => {
    let total = 0;
    for (const value of values) total += value;
    return values.length > 0 ? total / values.length : 0;
  };
  const summary: BenchmarkSummary = {
    answer_f1: pythonRound(mean(answerable.map((line) => line.f1)), 3),
    answer_em: pythonRound(mean(answerable.map((line) => line.em)), 3),
    support_f1: pythonRound(mean(answerable.map((line) => line.supportF1)), 3),
    answerable: answerable.length,
    text: "",
  };
  if (lines.some((line) => !line.goldAnswerable)) {
    const groups = new Map<string, Line[]>();
    for (const line of lines) groups.set(line.id, [...(groups.get(line.id) ?? []), line]);
    const answerScores: number[] = [];
    const supportScores: number[] = [];
    let unpaired = 0;
    for (const group of groups.values()) {
      const answerableCopy = group.filter((line) => line.goldAnswerable).at(-1);
      if (group.length !== 2 || !answerableCopy) {
        unpaired++;
        continue;
      }
      const sufficient = group.every((line) => line.predictedAnswerable === line.goldAnswerable);
      answerScores.push(sufficient ? answerableCopy.f1 : 0);
      supportScores.push(sufficient ? answerableCopy.supportF1 : 0);
    }
    summary.ids = answerScores.length;
    summary.unpaired_ids = unpaired;
    if (answerScores.length > 0) {
      summary.group_answer_sufficiency_f1 = pythonRound(mean(answerScores), 3);
      summary.group_support_sufficiency_f1 = pythonRound(mean(supportScores), 3);
    }
  }
  const keys = ["answer_f1", "answer_em", "support_f1", "group_answer_sufficiency_f1", "group_support_sufficiency_f1"].filter((key) => key in summary);
  const unpairedNote = summary.unpaired_ids ? ` (${String(summary.unpaired_ids)} ids without both lines left out of the group metrics)` : "";
  summary.text = `${keys.map((key) => `${key} ${pythonFloatRepr(summary[key] as number)}`).join(", ")}${unpairedNote}`;
  return summary;
}
