import { readFileSync } from "node:fs";
import { DataError } from "../../core/index.ts";
import { wikiAnswerScores, wikiEvidenceScores, wikiGoldAnswers, wikiGoldEvidenceVariants, wikiSupportScores, type GoldEvidence } from "./2wiki-metric.ts";
import { loadWikiAliases } from "./dataset.ts";
import { PythonFloat, pythonJsonDumps, pythonRound } from "../../python-semantics/index.ts";
import { evaluateMusique, type MusiqueEvaluation, type MusiqueFiles, type PythonNumber } from "./musique-evaluate.ts";
import { readJsonArray, readJsonLines } from "./read-records.ts";

/**
 * `toolgym score`: prediction files in the official formats scored exactly as the official scripts
 * do (MuSiQue `evaluate_v1.0.py`, 2Wiki `2wikimultihop_evaluate_v1.1.py`), including their
 * denominators, rounding and printed output.
 */
export interface ScoreResult {
  dataset: "musique" | "2wiki";
  /** Instances in the denominator (MuSiQue: answerable gold lines, as for answer_f1; 2Wiki: gold records). */
  n: number;
  /** The official output fields, rounded and scaled as the official script prints them. */
  metrics: Record<string, PythonNumber>;
  /** Lines the official script prints before the metrics (2Wiki "missing answer <id>"). */
  messages: string[];
  /** Caveats about this result (printed on stderr by the CLI). */
  notes: string[];
}

/** What the official script prints to stdout. */
export function formatOfficialOutput(result: ScoreResult): string {
  const metrics = Object.entries(result.metrics).map(([key, number]) => [key, number.isInteger ? number.value : new PythonFloat(number.value)]);
  return [...result.messages, pythonJsonDumps(Object.fromEntries(metrics), { indent: 4 })].join("\n");
}

/** The metrics as plain numbers (`--json`). */
export function metricValues(result: ScoreResult): Record<string, number> {
  return Object.fromEntries(Object.entries(result.metrics).map(([key, number]) => [key, number.value]));
}

type Json = Record<string, unknown>;

/** Fixes named in `toolgym score`'s errors: its inputs are the --gold and --pred files, not an environment config. */
const SCORE_FIXES = { unreadable: "check the --gold / --pred path", malformed: "fix the line; every line must be one JSON object" };
/** --aliases is read whole (no skipping): the fix is the line itself or the official file. */
const SCORE_ALIASES_FIXES = {
  unreadable: "check the --aliases path",
  malformed: "fix the line (JSON Lines of {Q_id, aliases, demonyms}) or pass the official id_aliases.json as --aliases",
};

function readLines(file: string): Array<{ value: Json; line: number }> {
  const records: Array<{ value: Json; line: number }> = [];
  readJsonLines({ file, fixes: SCORE_FIXES }, (value, position) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("each line must be a JSON object");
    records.push({ value: value as Json, line: position.line });
  });
  return records;
}

function fail(file: string, line: number | undefined, message: string): never {
  throw new DataError({ code: "SCORE_INPUT_INVALID", file, ...(line ? { line } : {}), message });
}

/** The official MuSiQue evaluation of two files (the prediction file is read first, as the official script does). */
export function evaluateMusiqueFiles(files: MusiqueFiles): MusiqueEvaluation {
  const predictions = readLines(files.predictionFile);
  const golds = readLines(files.goldFile);
  return evaluateMusique(golds, predictions, files);
}

/**
 * MuSiQue `evaluate_v1.0.py`: answer_f1, answer_em, support_f1 over answerable instances and, for
 * MuSiQue-Full gold files, group_answer_sufficiency_f1 and group_support_sufficiency_f1; round(x, 3).
 */
export function scoreMusiqueFiles(options: MusiqueFiles): ScoreResult {
  const evaluation = evaluateMusiqueFiles(options);
  return { dataset: "musique", n: evaluation.answerable, metrics: evaluation.metrics, messages: [], notes: [] };
}

const WIKI_KEYS = [
  "em",
  "f1",
  "prec",
  "recall",
  "sp_em",
  "sp_f1",
  "sp_prec",
  "sp_recall",
  "evi_em",
  "evi_f1",
  "evi_prec",
  "evi_recall",
  "joint_em",
  "joint_f1",
  "joint_prec",
  "joint_recall",
] as const;

interface WikiGold {
  id: string;
  answer: string;
  answerId: string | null;
  supportingFacts: unknown[];
  evidence: GoldEvidence;
}

function readWikiGold(file: string): WikiGold[] {
  const golds: WikiGold[] = [];
  readJsonArray({ file, fixes: { unreadable: SCORE_FIXES.unreadable, malformed: "fix the record in the JSON array" } }, (value) => {
    const record = value as Json;
    if (typeof record !== "object" || record === null || typeof record._id !== "string" || typeof record.answer !== "string")
      throw new Error("each record needs a string '_id' and 'answer' (test files have no labels)");
    if (!("answer_id" in record) || !Array.isArray(record.evidences_id))
      throw new Error("no 'answer_id' / 'evidences_id': the v1.1 scorer needs the data_ids.zip version of dev.json");
    if (!Array.isArray(record.supporting_facts) || !Array.isArray(record.evidences)) throw new Error("needs 'supporting_facts' and 'evidences' lists");
    golds.push({
      id: record._id,
      answer: record.answer,
      answerId: typeof record.answer_id === "string" ? record.answer_id : null,
      supportingFacts: record.supporting_facts,
      evidence: { evidences: record.evidences as GoldEvidence["evidences"], evidencesId: record.evidences_id as GoldEvidence["evidencesId"] },
    });
  });
  return golds;
}

/** 2Wiki `2wikimultihop_evaluate_v1.1.py`: 16 metrics, each round(sum / len(gold) * 100, 2). */
export function scoreWikiFiles(options: { goldFile: string; predictionFile: string; aliasesFile?: string }): ScoreResult {
  const golds = readWikiGold(options.goldFile);
  if (golds.length === 0) fail(options.goldFile, undefined, "has no records; point --gold at dev.json");
  let prediction: Json;
  try {
    prediction = JSON.parse(readFileSync(options.predictionFile, "utf8")) as Json;
  } catch (error) {
    fail(
      options.predictionFile,
      undefined,
      `is not one JSON object (${(error as Error).message.replace(/\s+/g, " ")}); the format is {"answer": {id: str}, "sp": {id: [[title, sent_id]]}, "evidence": {id: [[s, r, o]]}}`,
    );
  }
  for (const key of ["answer", "sp", "evidence"]) {
    const part = prediction[key];
    if (typeof part !== "object" || part === null || Array.isArray(part))
      fail(
        options.predictionFile,
        undefined,
        `needs a top-level '${key}' object keyed by _id (the official scorer fails without it; use {} to predict nothing)`,
      );
  }
  const answers = prediction.answer as Json;
  const supports = prediction.sp as Json;
  const evidences = prediction.evidence as Json;
  const aliases = options.aliasesFile ? loadWikiAliases(options.aliasesFile, SCORE_ALIASES_FIXES) : new Map<string, Set<string>>();
  const sums: Record<string, number> = Object.fromEntries(WIKI_KEYS.map((key) => [key, 0]));
  const messages: string[] = [];
  const has = (part: Json, id: string) => Object.prototype.hasOwnProperty.call(part, id);
  for (const gold of golds) {
    let joint = true;
    let answer = { em: 0, prec: 0, recall: 0 };
    let support = { em: 0, prec: 0, recall: 0 };
    let evidence = { em: 0, prec: 0, recall: 0 };
    try {
      if (!has(answers, gold.id)) {
        messages.push(`missing answer ${gold.id}`);
        joint = false;
      } else {
        const text = answers[gold.id];
        if (typeof text !== "string") throw new TypeError("the predicted answer must be a string");
        const scores = wikiAnswerScores(text, wikiGoldAnswers(gold.answer, gold.answerId, aliases));
        sums.em = (sums.em as number) + scores.em;
        sums.f1 = (sums.f1 as number) + scores.f1;
        sums.prec = (sums.prec as number) + scores.prec;
        sums.recall = (sums.recall as number) + scores.recall;
        answer = scores;
      }
      if (!has(supports, gold.id)) {
        messages.push(`missing sp fact ${gold.id}`);
        joint = false;
      } else {
        const predicted = supports[gold.id];
        if (!Array.isArray(predicted)) throw new TypeError("the predicted sp must be a list of [title, sent_id]");
        const scores = wikiSupportScores(predicted, gold.supportingFacts);
        sums.sp_em = (sums.sp_em as number) + scores.em;
        sums.sp_f1 = (sums.sp_f1 as number) + scores.f1;
        sums.sp_prec = (sums.sp_prec as number) + scores.prec;
        sums.sp_recall = (sums.sp_recall as number) + scores.recall;
        support = scores;
      }
      if (!has(evidences, gold.id)) {
        messages.push(`missing evidence ${gold.id}`);
        joint = false;
      } else {
        const scores = wikiEvidenceScores(evidences[gold.id] as unknown[], wikiGoldEvidenceVariants(gold.evidence, aliases));
        sums.evi_em = (sums.evi_em as number) + scores.em;
        sums.evi_f1 = (sums.evi_f1 as number) + scores.f1;
        sums.evi_prec = (sums.evi_prec as number) + scores.prec;
        sums.evi_recall = (sums.evi_recall as number) + scores.recall;
        evidence = scores;
      }
    } catch (error) {
      fail(options.predictionFile, undefined, `prediction for ${gold.id}: ${(error as Error).message}`);
    }
    if (joint) {
      const jointPrec = answer.prec * support.prec * evidence.prec;
      const jointRecall = answer.recall * support.recall * evidence.recall;
      sums.joint_em = (sums.joint_em as number) + answer.em * support.em * evidence.em;
      sums.joint_f1 = (sums.joint_f1 as number) + (jointPrec + jointRecall > 0 ? (2 * jointPrec * jointRecall) / (jointPrec + jointRecall) : 0);
      sums.joint_prec = (sums.joint_prec as number) + jointPrec;
      sums.joint_recall = (sums.joint_recall as number) + jointRecall;
    }
  }
  const n = golds.length;
  const metrics = Object.fromEntries(WIKI_KEYS.map((key) => [key, { value: pythonRound(((sums[key] as number) / n) * 100, 2) }]));
  const notes = options.aliasesFile
    ? []
    : ["no id_aliases.json given (--aliases): answers and evidence were scored without alias expansion, as the official script with an empty alias file"];
  return { dataset: "2wiki", n, metrics, messages, notes };
}
