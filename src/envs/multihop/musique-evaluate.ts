import { DataError } from "../../core/index.ts";
import { musiqueAnswerScores, musiqueSupportScores } from "./musique-metric.ts";
import {
  PythonError,
  pythonEquals,
  pythonHashKey,
  pythonInt,
  pythonIterate,
  pythonRound,
  pythonStr,
  pythonTruthy,
  pythonTypeName,
} from "../../python-semantics/index.ts";

/**
 * The official MuSiQue scorer (`evaluate_v1.0.py` of StonyBrookNLP/musique) on parsed gold and
 * prediction lines, for MuSiQue-Ans and MuSiQue-Full alike:
 * - answer_f1 / answer_em / support_f1 average over the gold-answerable lines and ignore the predicted
 *   answerability;
 * - when any gold line is unanswerable (MuSiQue-Full), every id must occur exactly twice and the group
 *   metrics average over ids: the answerable copy's answer (support) F1, zeroed unless the two predicted
 *   answerability values equal the gold ones as a list in file order;
 * - every value is Python's `round(x, 3)`.
 * Inputs the official script crashes on are rejected with a DataError that quotes its exception.
 */
export interface MusiqueLine {
  value: Record<string, unknown>;
  /** 1-based line in its file. */
  line: number;
}

/** One question id of a MuSiQue-Full evaluation (what the official group metrics see). */
export interface MusiqueQuestionScores {
  /** `str(id)`, the official group key. */
  id: string;
  predictedAnswerable: unknown[];
  goldAnswerable: unknown[];
  /** Answer and support scores of the answerable copy, before the sufficiency gate. */
  answerEm: number;
  answerF1: number;
  supportEm: number;
  supportF1: number;
  sufficiencyCorrect: boolean;
  groupAnswerSufficiencyF1: number;
  groupSupportSufficiencyF1: number;
}

export interface MusiqueEvaluation {
  /** The printed metrics, in the official key order, rounded as printed. */
  metrics: Record<string, PythonNumber>;
  /** The same before rounding (what `round` received). */
  unrounded: Record<string, number>;
  /** Gold-answerable lines: the denominator of answer_f1, answer_em, support_f1. */
  answerable: number;
  /** True when a gold line is unanswerable (the group metrics are printed). */
  full: boolean;
  /** Per id, in first-appearance order (MuSiQue-Full only). */
  questions: MusiqueQuestionScores[];
}

export interface MusiqueFiles {
  goldFile: string;
  predictionFile: string;
}

const SCRIPT = "evaluate_v1.0.py";

function reject(options: { code: string; file: string; line?: number; message: string; official: string }): never {
  throw new DataError({
    code: options.code,
    file: options.file,
    ...(options.line ? { line: options.line } : {}),
    message: `${options.message} (${SCRIPT} fails with ${options.official})`,
  });
}

/** `record[key]`, or the official KeyError as a one-line rejection. */
function field(record: MusiqueLine, key: string, file: string, fix: string): unknown {
  if (!Object.prototype.hasOwnProperty.call(record.value, key)) {
    reject({ code: "SCORE_FIELD_MISSING", file, line: record.line, message: `missing '${key}'; ${fix}`, official: `KeyError: '${key}'` });
  }
  return record.value[key];
}

/** A metric as the official script holds it: a Python float, or a Python int (it returns int 0 sometimes). */
export interface PythonNumber {
  value: number;
  isInteger?: boolean;
}

/** Runs one official step; a Python exception becomes a SCORE_FIELD_INVALID rejection with the fix. */
function guarded<T>(file: string, line: number, fix: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (!(error instanceof PythonError)) throw error;
    return reject({ code: "SCORE_FIELD_INVALID", file, line, message: fix, official: error.official });
  }
}

/** `normalize_answer` calls `.lower()`: anything but a string fails there. */
function requireString(value: unknown): string {
  if (typeof value !== "string") throw new PythonError("AttributeError", `'${pythonTypeName(value)}' object has no attribute 'lower'`);
  return value;
}

function answerScores(predicted: unknown, golds: unknown[]): { em: number; f1: number } {
  // metric_max_over_ground_truths normalizes the prediction before each gold.
  const prediction = requireString(predicted);
  return musiqueAnswerScores(prediction, golds.map(requireString));
}

function supportScores(predicted: unknown, gold: unknown[]): { em: number; f1: number } {
  return musiqueSupportScores(pythonIterate(predicted).map(pythonInt), gold.map(pythonInt));
}

interface Group {
  id: unknown;
  line: number;
  predictedAnswer?: unknown;
  goldAnswers?: unknown[];
  predictedSupport: unknown;
  goldSupport: unknown[];
  predicted: unknown[];
  gold: unknown[];
}

const PREDICTION_FIX = "each prediction line is {id, predicted_answer: str, predicted_support_idxs: [int], predicted_answerable: bool}";
const GOLD_FIX = "score against the labelled dev file (musique_ans_v1.0_dev.jsonl or musique_full_v1.0_dev.jsonl; test files have no labels)";

export function evaluateMusique(golds: MusiqueLine[], predictions: MusiqueLine[], files: MusiqueFiles): MusiqueEvaluation {
  const { goldFile, predictionFile } = files;
  if (golds.length !== predictions.length) {
    reject({
      code: "SCORE_LINE_COUNT_MISMATCH",
      file: predictionFile,
      message: `has ${predictions.length} predictions but the gold file has ${golds.length} instances; write one line per gold line, in the gold file's order`,
      official: "AssertionError: The number of lines in the two files are not the same.",
    });
  }
  const totals = { em: 0, f1: 0, count: 0, supportF1: 0, supportCount: 0 };
  const groups = new Map<string, Group>();
  let full = false;
  golds.forEach((gold, position) => {
    const prediction = predictions[position] as MusiqueLine;
    const goldId = field(gold, "id", goldFile, GOLD_FIX);
    const predictedId = field(prediction, "id", predictionFile, PREDICTION_FIX);
    if (!pythonEquals(goldId, predictedId)) {
      reject({
        code: "SCORE_ID_ORDER_MISMATCH",
        file: predictionFile,
        line: prediction.line,
        message: `id ${JSON.stringify(predictedId)} where the gold file has ${JSON.stringify(goldId)} (line ${gold.line}); write the predictions in the gold file's order`,
        official: "AssertionError: The instances (ids) in prediction and gold filepath jsonl should be in same order.",
      });
    }
    const predictedAnswer = field(prediction, "predicted_answer", predictionFile, PREDICTION_FIX);
    const answer = field(gold, "answer", goldFile, GOLD_FIX);
    const aliases = field(gold, "answer_aliases", goldFile, GOLD_FIX);
    if (!Array.isArray(aliases)) {
      reject({
        code: "SCORE_FIELD_INVALID",
        file: goldFile,
        line: gold.line,
        message: "'answer_aliases' must be a list of strings",
        official: `TypeError: can only concatenate list (not "${pythonTypeName(aliases)}") to list`,
      });
    }
    const goldAnswers = [answer, ...aliases];
    const predictedSupport = field(prediction, "predicted_support_idxs", predictionFile, PREDICTION_FIX);
    const paragraphs = field(gold, "paragraphs", goldFile, GOLD_FIX);
    const goldSupport = guarded(goldFile, gold.line, "'paragraphs' must be a list of {idx, is_supporting, ...} objects", () =>
      pythonIterate(paragraphs)
        .map((paragraph) => {
          if (typeof paragraph !== "object" || paragraph === null || Array.isArray(paragraph))
            throw new PythonError(
              "TypeError",
              `${pythonTypeName(paragraph) === "list" ? "list indices must be integers or slices, not str" : `'${pythonTypeName(paragraph)}' object is not subscriptable`}`,
            );
          return paragraph as Record<string, unknown>;
        })
        .filter((paragraph) => {
          if (!("is_supporting" in paragraph)) throw new PythonError("KeyError", "'is_supporting'");
          return pythonTruthy(paragraph.is_supporting);
        })
        .map((paragraph) => {
          if (!("idx" in paragraph)) throw new PythonError("KeyError", "'idx'");
          return paragraph.idx;
        }),
    );
    const predictedAnswerable = field(prediction, "predicted_answerable", predictionFile, PREDICTION_FIX);
    const goldAnswerable = field(gold, "answerable", goldFile, GOLD_FIX);

    if (pythonTruthy(goldAnswerable)) {
      const answerFix =
        typeof predictedAnswer === "string"
          ? "every gold answer and alias must be a string"
          : `'predicted_answer' is ${JSON.stringify(predictedAnswer)} on an answerable question; write a string (use "" for no answer; null is accepted only on unanswerable lines)`;
      const scores = guarded(
        typeof predictedAnswer === "string" ? goldFile : predictionFile,
        typeof predictedAnswer === "string" ? gold.line : prediction.line,
        answerFix,
        () => answerScores(predictedAnswer, goldAnswers),
      );
      totals.em += scores.em;
      totals.f1 += scores.f1;
      totals.count++;
      const support = guarded(
        predictionFile,
        prediction.line,
        "'predicted_support_idxs' must be a list of paragraph idx integers (and every gold supporting paragraph needs an integer idx)",
        () => supportScores(predictedSupport, goldSupport),
      );
      totals.supportF1 += support.f1;
      totals.supportCount++;
    }

    const key = pythonStr(goldId);
    let group = groups.get(key);
    if (!group) {
      group = { id: goldId, line: gold.line, predictedSupport: [], goldSupport: [], predicted: [], gold: [] };
      groups.set(key, group);
    }
    if (pythonEquals(goldAnswerable, 1)) {
      // A later answerable line of the same id replaces an earlier one, as in the official store.
      group.predictedAnswer = predictedAnswer;
      group.goldAnswers = goldAnswers;
      group.predictedSupport = predictedSupport;
      group.goldSupport = goldSupport;
    }
    group.predicted.push(predictedAnswerable);
    group.gold.push(goldAnswerable);
    if (!pythonTruthy(goldAnswerable)) full = true;
  });

  const average = (total: number, count: number): number => (count > 0 ? total / count : 0);
  const unrounded: Record<string, number> = {
    answer_f1: average(totals.f1, totals.count),
    answer_em: average(totals.em, totals.count),
    support_f1: average(totals.supportF1, totals.supportCount),
  };
  // With no answerable line the official averages are the int 0, printed without ".0".
  const printed = (value: number, count: number): PythonNumber => (count > 0 ? { value: pythonRound(value, 3) } : { value: 0, isInteger: true });
  const metrics: Record<string, PythonNumber> = {
    answer_f1: printed(unrounded.answer_f1 as number, totals.count),
    answer_em: printed(unrounded.answer_em as number, totals.count),
    support_f1: printed(unrounded.support_f1 as number, totals.supportCount),
  };
  if (!full) return { metrics, unrounded, answerable: totals.count, full, questions: [] };

  checkPairs(predictions, predictionFile);
  const questions = groupScores(groups, goldFile);
  const groupAverage = (pick: (question: MusiqueQuestionScores) => number): number => {
    let total = 0;
    for (const question of questions) total += pick(question);
    return total / questions.length;
  };
  unrounded.group_answer_sufficiency_f1 = groupAverage((question) => question.groupAnswerSufficiencyF1);
  unrounded.group_support_sufficiency_f1 = groupAverage((question) => question.groupSupportSufficiencyF1);
  metrics.group_answer_sufficiency_f1 = { value: pythonRound(unrounded.group_answer_sufficiency_f1, 3) };
  metrics.group_support_sufficiency_f1 = { value: pythonRound(unrounded.group_support_sufficiency_f1, 3) };
  return { metrics, unrounded, answerable: totals.count, full, questions };
}

const PAIR_FIX =
  "MuSiQue-Full needs exactly two lines per id (the answerable question and its unanswerable twin); score the complete file, or drop the unanswerable lines to score as MuSiQue-Ans";

/** `set(Counter(prediction ids).values()) == {2}`. */
function checkPairs(predictions: MusiqueLine[], predictionFile: string): void {
  const counts = new Map<string, { id: unknown; line: number; count: number }>();
  for (const prediction of predictions) {
    const key = guarded(predictionFile, prediction.line, "an id must be a string", () => pythonHashKey(prediction.value.id));
    const entry = counts.get(key) ?? { id: prediction.value.id, line: prediction.line, count: 0 };
    entry.count++;
    counts.set(key, entry);
  }
  for (const entry of counts.values()) {
    if (entry.count !== 2) {
      reject({
        code: "SCORE_GROUP_NOT_PAIRED",
        file: predictionFile,
        line: entry.line,
        message: `id ${JSON.stringify(entry.id)} occurs ${entry.count === 1 ? "once" : `${entry.count} times`}; ${PAIR_FIX}`,
        official: "AssertionError: For sufficiency evaluation, there should two instances for each question.",
      });
    }
  }
}

/** The official GroupAnswerSufficiencyMetric, then GroupSupportSufficiencyMetric, per id in store order. */
function groupScores(groups: Map<string, Group>, goldFile: string): MusiqueQuestionScores[] {
  const questions: MusiqueQuestionScores[] = [];
  for (const [id, group] of groups) {
    if (group.goldAnswers === undefined || group.predictedAnswer === undefined) {
      reject({
        code: "SCORE_GROUP_NO_ANSWERABLE",
        file: goldFile,
        line: group.line,
        message: `id ${JSON.stringify(group.id)} has no line with answerable true; each MuSiQue-Full pair is one answerable question and its unanswerable twin`,
        official: "AssertionError",
      });
    }
    if (group.predicted.length !== 2) {
      reject({
        code: "SCORE_GROUP_NOT_PAIRED",
        file: goldFile,
        line: group.line,
        message: `id ${JSON.stringify(group.id)}: ${PAIR_FIX}`,
        official: "AssertionError",
      });
    }
    const answer = answerScores(group.predictedAnswer, group.goldAnswers);
    const sufficient = pythonEquals(group.predicted, group.gold);
    questions.push({
      id,
      predictedAnswerable: group.predicted,
      goldAnswerable: group.gold,
      answerEm: answer.em,
      answerF1: answer.f1,
      supportEm: 0,
      supportF1: 0,
      sufficiencyCorrect: sufficient,
      groupAnswerSufficiencyF1: sufficient ? answer.f1 : 0,
      groupSupportSufficiencyF1: 0,
    });
  }
  questions.forEach((question) => {
    const group = groups.get(question.id) as Group;
    const support = supportScores(group.predictedSupport, group.goldSupport);
    question.supportEm = support.em;
    question.supportF1 = support.f1;
    question.groupSupportSufficiencyF1 = question.sufficiencyCorrect ? support.f1 : 0;
  });
  return questions;
}
