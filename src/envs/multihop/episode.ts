import { scoreComponents, toolError, type Episode, type Message } from "../../core/index.ts";
import { episodeFromParts } from "../_kit/episode-parts.ts";
import { wikiAnswerScores } from "./2wiki-metric.ts";
import { extractTextAnswer } from "./answer-text.ts";
import { getDataset, type DataSource, type MultihopDatasetId } from "./dataset.ts";
import { fullReward, isUnanswerableText } from "./musique-full.ts";
import { musiqueAnswerScores, musiqueSupportScores } from "./musique-metric.ts";
import type { MultihopExample } from "./records.ts";
import { documentKey, exampleCorpus, poolCorpus, type Corpus } from "./retrieval.ts";
import { multihopToolbox, type MultihopToolState } from "./tools.ts";

export const MODES = ["context", "search", "pool", "closed_book"] as const;
export type MultihopMode = (typeof MODES)[number];

/** A multihop task: one example of the loaded file plus how it is posed. */
export interface MultihopTask {
  dataset: MultihopDatasetId;
  mode: MultihopMode;
  source: DataSource;
  /** Position of the example in the file (the task index modulo the number of examples). */
  position: number;
  count: number;
  /** Malformed records skipped while loading (skip_bad mode). */
  skipped: number;
  example: MultihopExample;
  /** The gold answers the official metric maximises over (MuSiQue aliases; 2Wiki id_aliases.json). */
  golds: string[];
  topK: number;
  maxTurns: number;
  /**
   * The loaded file has unanswerable records (MuSiQue-Full): the agent may answer "unanswerable", and
   * the reward gates the answer on the predicted answerability.
   */
  full: boolean;
}

/** What MuSiQue-Full episodes add to each prompt. */
const TOOL_UNANSWERABLE =
  " Some questions cannot be answered from the collection: when the paragraphs do not contain what the question needs, call finish with answerable: false (or answer 'unanswerable').";
const TEXT_UNANSWERABLE = " If the paragraphs do not contain what the question needs, end with the line 'Answer: unanswerable'.";
const CLOSED_BOOK_UNANSWERABLE = " If you cannot answer it, end with the line 'Answer: unanswerable'.";

const TOOL_SYSTEM =
  "You answer multi-hop questions using a collection of Wikipedia paragraphs. Use search(query) to find paragraphs, read(title) to read them, and call finish(answer) with a short answer (an entity, date, number, yes or no), not a sentence.";
const CONTEXT_SYSTEM =
  "Answer the question based on the given paragraphs. You may reason first; end your reply with a last line of the form 'Answer: <short answer>' (an entity, date, number, yes or no), not a sentence.";
const CLOSED_BOOK_SYSTEM =
  "Answer the question based on your own knowledge. You may reason first; end your reply with a last line of the form 'Answer: <short answer>' (an entity, date, number, yes or no), not a sentence.";

export function promptMessages(task: MultihopTask): Message[] {
  const question = `Question: ${task.example.question}`;
  const extra = (text: string) => (task.full ? text : "");
  if (task.mode === "context") {
    const paragraphs = task.example.paragraphs
      .map((paragraph, position) => `Paragraph ${position + 1} (Title: ${paragraph.title})\n${paragraph.text}`)
      .join("\n\n");
    return [
      { role: "system", content: CONTEXT_SYSTEM + extra(TEXT_UNANSWERABLE) },
      { role: "user", content: `${paragraphs}\n\n${question}` },
    ];
  }
  if (task.mode === "closed_book") {
    return [
      { role: "system", content: CLOSED_BOOK_SYSTEM + extra(CLOSED_BOOK_UNANSWERABLE) },
      { role: "user", content: question },
    ];
  }
  return [
    { role: "system", content: TOOL_SYSTEM + extra(TOOL_UNANSWERABLE) },
    { role: "user", content: question },
  ];
}

/** The official per-instance answer scores of the task's dataset. */
export function answerScores(task: Pick<MultihopTask, "dataset" | "golds">, answer: string): { em: number; f1: number } {
  if (task.dataset === "musique") return musiqueAnswerScores(answer, task.golds);
  const scores = wikiAnswerScores(answer, task.golds);
  return { em: scores.em, f1: scores.f1 };
}

export function startEpisode(task: MultihopTask): Episode {
  const isTools = task.mode === "search" || task.mode === "pool";
  const corpus: Corpus | undefined =
    task.mode === "search" ? exampleCorpus(task.example) : task.mode === "pool" ? poolCorpus(getDataset(task.source)) : undefined;
  const supportingKeys = new Set(task.example.paragraphs.filter((paragraph) => paragraph.supporting).map(documentKey));
  const goldSupportIdxs = task.example.paragraphs.filter((paragraph) => paragraph.supporting).map((paragraph) => paragraph.idx);
  const toolbox = multihopToolbox(task.full);
  const state: MultihopToolState = {
    // text modes have no corpus; their calls are refused before any tool runs
    corpus: corpus as Corpus,
    topK: task.topK,
    queries: [],
    readKeys: new Set(),
    searches: 0,
    reads: 0,
    answer: null,
    predictedAnswerable: null,
    done: false,
  };
  const { readKeys } = state;
  /** The example's paragraph idx the agent has read (its predicted support). */
  const readIdxs = () => task.example.paragraphs.filter((paragraph) => readKeys.has(documentKey(paragraph))).map((paragraph) => paragraph.idx);

  return episodeFromParts({
    protocol: isTools ? "tools" : "text",
    messages: promptMessages(task),
    tools: isTools ? toolbox.specs : [],
    ...(isTools ? { validators: toolbox.validators } : {}),
    isDone: () => state.done,
    call(name, args) {
      if (state.done) return toolError("after_finish", "the episode has finished");
      return toolbox.run(state, name, args);
    },
    // A text mode has no tools: the driver refuses every call, and the answer says what to send instead.
    ...(isTools ? {} : { rejected: () => toolError("unknown_tool", "this mode takes a plain-text reply ending with 'Answer: ...', not tool calls") }),
    reply(text) {
      if (isTools) return toolError("no_tool_call", "call search, read or finish");
      state.answer = extractTextAnswer(text);
      state.predictedAnswerable = !isUnanswerableText(state.answer);
      state.done = true;
      return { content: "", isError: false, done: true };
    },
    reward() {
      const supportingTotal = supportingKeys.size;
      const supportingRead = [...supportingKeys].filter((key) => readKeys.has(key)).length;
      const { answer, predictedAnswerable } = state;
      const scores = answer === null ? { em: 0, f1: 0 } : answerScores(task, answer);
      const supporting = () => (task.mode === "context" ? 1 : supportingTotal === 0 ? 0 : supportingRead / supportingTotal);
      // MuSiQue's official support F1 with the paragraphs the agent read as its predicted support (what
      // `toolgym export --format musique` writes); answerable questions only, as the official script.
      const diagnostics: Record<string, number> =
        task.dataset === "musique" && task.example.answerable ? { support_f1: musiqueSupportScores(readIdxs(), goldSupportIdxs).f1 } : {};
      if (task.full) return { ...fullReward(task.example.answerable, predictedAnswerable, scores, supporting), diagnostics };
      const { values, errors } = scoreComponents({ f1: () => scores.f1, em: () => scores.em, supporting_read: supporting });
      return {
        total: values.f1 ?? null,
        components: values,
        formula: "f1 (official answer F1; em and supporting_read are reported, not added)",
        errors,
        diagnostics,
      };
    },
    diagnostics() {
      return {
        dataset: task.dataset,
        mode: task.mode,
        data_file: task.source.file,
        example_id: task.example.id,
        position: task.position,
        examples: task.count,
        skipped_records: task.skipped,
        answer: state.answer,
        predicted_answerable: state.predictedAnswerable,
        gold_answerable: task.example.answerable,
        read_idxs: readIdxs(),
        searches: state.searches,
        reads: state.reads,
        supporting_read: [...supportingKeys].filter((key) => readKeys.has(key)).length,
        supporting_total: supportingKeys.size,
      };
    },
  });
}
