import { DataError, type ExportEpisode, type RunExporter } from "../../core/index.ts";
import { getDataset, resolveDataSource, type MultihopDatasetId } from "./dataset.ts";
import type { MultihopExample } from "./records.ts";
import { scoreMusiqueFiles, scoreWikiFiles, type ScoreResult } from "./score-files.ts";

/**
 * `toolgym export RUN --format musique|2wiki`: a run's episodes as the official prediction files, so
 * `toolgym score` (or the official scripts) score them. The answer is the one the agent gave (`finish`
 * or the text reply's "Answer:" line); supporting paragraphs are those the agent read; predicted_answerable
 * is its MuSiQue-Full verdict (false after finish(answerable: false) or the answer "unanswerable").
 */
interface EpisodeFacts {
  id: string;
  position: number;
  answer: string;
  /** The agent's answerability verdict (MuSiQue-Full); true when it gave none or the run predates it. */
  predictedAnswerable: boolean;
  readTitles: Set<string>;
  /** The paragraph idx the episode read (its `read_idxs` diagnostic; absent in runs that predate it). */
  readIdxs: number[] | undefined;
  example: MultihopExample | undefined;
}

type JsonObject = Record<string, unknown>;

function asObject(value: unknown): JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
}

/** The example a trajectory was posed from, reloaded from its config (undefined when the data file has moved). */
function exampleOf(dataset: MultihopDatasetId, trajectory: JsonObject, position: number): MultihopExample | undefined {
  try {
    const config = asObject(asObject(trajectory.env).config);
    return getDataset(resolveDataSource(dataset, config)).examples[position];
  } catch {
    return undefined;
  }
}

function factsOf(dataset: MultihopDatasetId, episode: ExportEpisode): EpisodeFacts {
  const trajectory = asObject(episode.trajectory);
  const diagnostics = asObject(trajectory.diagnostics);
  const id = diagnostics.example_id;
  const position = diagnostics.position;
  if (typeof id !== "string" || typeof position !== "number") {
    throw new DataError({
      code: "EXPORT_INPUT_INVALID",
      message: `episode ${String(episode.exampleId)} has no example_id/position diagnostics; was the run made with the ${dataset} environment?`,
    });
  }
  const readTitles = new Set<string>();
  for (const step of Array.isArray(trajectory.steps) ? trajectory.steps : []) {
    const record = asObject(step);
    const title = asObject(record.arguments).title;
    if (record.name === "read" && record.isError !== true && typeof title === "string") readTitles.add(title);
  }
  const answer = typeof diagnostics.answer === "string" ? diagnostics.answer : "";
  const predictedAnswerable = diagnostics.predicted_answerable !== false;
  const readIdxs = Array.isArray(diagnostics.read_idxs) ? diagnostics.read_idxs.filter((idx): idx is number => typeof idx === "number") : undefined;
  return { id, position, answer, predictedAnswerable, readTitles, readIdxs, example: exampleOf(dataset, trajectory, position) };
}

/**
 * One prediction per line of the data file, in file order; a repeated example (samples > 1) keeps its
 * first sample. Keyed by position, not id: MuSiQue-Full's unanswerable twins share their question's id.
 */
function uniqueFacts(dataset: MultihopDatasetId, episodes: ExportEpisode[]): EpisodeFacts[] {
  const byPosition = new Map<number, EpisodeFacts>();
  for (const episode of episodes) {
    const facts = factsOf(dataset, episode);
    if (!byPosition.has(facts.position)) byPosition.set(facts.position, facts);
  }
  return [...byPosition.values()].sort((left, right) => left.position - right.position);
}

/** MuSiQue `evaluate_v1.0.py` input: JSON Lines {id, predicted_answer, predicted_support_idxs, predicted_answerable}. */
export const musiquePredictions: RunExporter = {
  description: "MuSiQue official predictions (JSON Lines, one line per example in file order; score with toolgym score musique)",
  write(episodes) {
    return uniqueFacts("musique", episodes)
      .map((facts) => {
        const support =
          facts.readIdxs ?? (facts.example?.paragraphs ?? []).filter((paragraph) => facts.readTitles.has(paragraph.title)).map((paragraph) => paragraph.idx);
        return `${JSON.stringify({ id: facts.id, predicted_answer: facts.answer, predicted_support_idxs: support, predicted_answerable: facts.predictedAnswerable })}\n`;
      })
      .join("");
  },
};

/** 2Wiki `2wikimultihop_evaluate_v1.1.py` input: {answer: {id: text}, sp: {id: [[title, 0]]}, evidence: {id: []}}. */
export const wikiPredictions: RunExporter = {
  description: "2WikiMultihopQA official predictions ({answer, sp, evidence} keyed by _id; score with toolgym score 2wiki)",
  write(episodes) {
    const prediction = { answer: {} as JsonObject, sp: {} as JsonObject, evidence: {} as JsonObject };
    for (const facts of uniqueFacts("2wiki", episodes)) {
      prediction.answer[facts.id] = facts.answer;
      // The agent reads whole paragraphs, not sentences: each read title is predicted with its first sentence.
      prediction.sp[facts.id] = [...facts.readTitles].map((title) => [title, 0]);
      // toolgym's agents do not predict evidence triples.
      prediction.evidence[facts.id] = [];
    }
    return `${JSON.stringify(prediction)}\n`;
  },
};

/** `toolgym score DATASET`: the official scorers by dataset name, with what each accepts. */
export interface OfficialScorer {
  description: string;
  /** Whether `--aliases FILE` (2Wiki's id_aliases.json) applies. */
  acceptsAliases: boolean;
  score(files: { goldFile: string; predictionFile: string; aliasesFile?: string }): ScoreResult;
}

export const OFFICIAL_SCORERS: Record<MultihopDatasetId, OfficialScorer> = {
  musique: {
    description: "MuSiQue evaluate_v1.0.py",
    acceptsAliases: false,
    score: ({ goldFile, predictionFile }) => scoreMusiqueFiles({ goldFile, predictionFile }),
  },
  "2wiki": {
    description: "2WikiMultihopQA 2wikimultihop_evaluate_v1.1.py",
    acceptsAliases: true,
    score: (files) => scoreWikiFiles(files),
  },
};
