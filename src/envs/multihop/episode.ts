import { defineTool, scoreComponents, toolError, toolResult, type Episode, type Message, type ToolResult } from "../../core/index.ts";
import { wikiAnswerScores } from "./2wiki-metric.ts";
import { extractTextAnswer } from "./answer-text.ts";
import { getDataset, type DataSource, type MultihopDatasetId } from "./dataset.ts";
import { fullReward, isUnanswerableText } from "./musique-full.ts";
import { musiqueAnswerScores, musiqueSupportScores } from "./musique-metric.ts";
import type { MultihopExample } from "./records.ts";
import { documentKey, documentsTitled, exampleCorpus, poolCorpus, snippet, type Corpus } from "./retrieval.ts";

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

const READ_PAGE = 3;

const searchTool = defineTool({
  name: "search",
  description:
    "Search the paragraph collection (BM25 over titles and text). Returns up to `limit` hits {title, snippet}, best first; read a title to see its full paragraph.",
  parameters: {
    type: "object",
    properties: {
      query: { type: "string", description: "Keywords, e.g. 'Van Hook Township county'." },
      limit: { type: "integer", minimum: 1, maximum: 10, description: "Number of hits (default 5)." },
    },
    required: ["query"],
    additionalProperties: false,
  },
});
const readTool = defineTool({
  name: "read",
  description:
    "Read the full paragraph(s) with this exact title (as returned by search). Returns {title, total, paragraphs: [text...]}; pass offset to page when a title has more than 3 paragraphs.",
  parameters: {
    type: "object",
    properties: {
      title: { type: "string", description: "A paragraph title from the search results." },
      offset: { type: "integer", minimum: 0, description: "Skip this many paragraphs (default 0)." },
    },
    required: ["title"],
    additionalProperties: false,
  },
});
const finishTool = defineTool({
  name: "finish",
  description: "End the episode with your final answer: a short answer (an entity, date, number, yes or no), not a sentence.",
  parameters: {
    type: "object",
    properties: { answer: { type: "string", description: "The answer, e.g. 'Stanley'." } },
    required: ["answer"],
    additionalProperties: false,
  },
});

const finishFullTool = defineTool({
  name: "finish",
  description:
    "End the episode with your final answer: a short answer (an entity, date, number, yes or no), not a sentence; or answerable: false when the paragraphs do not contain what the question needs.",
  parameters: {
    type: "object",
    properties: {
      answer: { type: "string", description: "The answer, e.g. 'Stanley' (may be omitted when answerable is false)." },
      answerable: { type: "boolean", description: "false: the paragraphs cannot answer this question. Default true." },
    },
    additionalProperties: false,
  },
});

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
  const readKeys = new Set<string>();
  const goldSupportIdxs = task.example.paragraphs.filter((paragraph) => paragraph.supporting).map((paragraph) => paragraph.idx);
  /** The example's paragraph idx the agent has read (its predicted support). */
  const readIdxs = () => task.example.paragraphs.filter((paragraph) => readKeys.has(documentKey(paragraph))).map((paragraph) => paragraph.idx);
  const queries: string[] = [];
  let searches = 0;
  let reads = 0;
  let answer: string | null = null;
  /** The agent's answerability verdict; null until it answers. */
  let predictedAnswerable: boolean | null = null;
  let done = false;

  const search = (input: Record<string, unknown>): ToolResult => {
    if (typeof input.query !== "string" || input.query.trim() === "") return toolError("invalid_arguments", "search needs {query: string} with some keywords");
    const limit = input.limit === undefined ? task.topK : input.limit;
    if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > 10)
      return toolError("invalid_arguments", "limit must be an integer from 1 to 10");
    searches++;
    queries.push(input.query);
    const hits = (corpus as Corpus).index.search(input.query, { limit });
    if (hits.length === 0) return toolResult({ hits: [], note: "no paragraphs match; try other keywords" });
    return toolResult({
      hits: hits.map((hit) => ({
        title: (corpus as Corpus).documents[hit.docIndex]?.title,
        snippet: snippet((corpus as Corpus).documents[hit.docIndex]?.text ?? ""),
      })),
    });
  };

  const read = (input: Record<string, unknown>): ToolResult => {
    if (typeof input.title !== "string") return toolError("invalid_arguments", "read needs {title: string}");
    const offset = input.offset === undefined ? 0 : input.offset;
    if (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0) return toolError("invalid_arguments", "offset must be a non-negative integer");
    const active = corpus as Corpus;
    let matches = documentsTitled(active, input.title);
    if (matches.length === 0) {
      const suggestions = active.index.search(input.title, { limit: 3 }).map((hit) => active.documents[hit.docIndex]?.title);
      return toolError("unknown_title", `no paragraph titled '${input.title}'; use a title from the search results`, { did_you_mean: suggestions });
    }
    reads++;
    if (matches.length > READ_PAGE && queries.length > 0) {
      const query = queries.join(" ");
      const scores = new Map(matches.map((docIndex) => [docIndex, active.index.score(query, docIndex)]));
      matches = [...matches].sort((left, right) => (scores.get(right) as number) - (scores.get(left) as number) || left - right);
    }
    const page = matches.slice(offset, offset + READ_PAGE).map((docIndex) => active.documents[docIndex] as { title: string; text: string });
    for (const document of page) readKeys.add(documentKey(document));
    return toolResult({ title: page[0]?.title ?? input.title, total: matches.length, offset, paragraphs: page.map((document) => document.text) });
  };

  const finish = (input: Record<string, unknown>): ToolResult => {
    if (task.full) {
      if (input.answerable !== undefined && typeof input.answerable !== "boolean") return toolError("invalid_arguments", "answerable must be true or false");
      const abstains = input.answerable === false;
      if (input.answer !== undefined ? typeof input.answer !== "string" : !abstains)
        return toolError("invalid_arguments", "finish needs {answer: string}, or {answerable: false} when the paragraphs cannot answer the question");
      answer = typeof input.answer === "string" ? input.answer : "";
      predictedAnswerable = !abstains && !isUnanswerableText(answer);
    } else {
      if (typeof input.answer !== "string") return toolError("invalid_arguments", "finish needs {answer: string}");
      answer = input.answer;
      predictedAnswerable = !isUnanswerableText(answer);
    }
    done = true;
    return toolResult({ ok: true }, { done: true });
  };

  return {
    protocol: isTools ? "tools" : "text",
    messages: promptMessages(task),
    tools: isTools ? [searchTool, readTool, task.full ? finishFullTool : finishTool] : [],
    get done() {
      return done;
    },
    call(name, args) {
      if (!isTools) return toolError("unknown_tool", "this mode takes a plain-text reply ending with 'Answer: ...', not tool calls");
      const input = typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
      if (done) return toolError("after_finish", "the episode has finished");
      if (name === "search") return search(input);
      if (name === "read") return read(input);
      if (name === "finish") return finish(input);
      return toolError("unknown_tool", `unknown tool '${name}'; available: search, read, finish`);
    },
    reply(text) {
      if (isTools) return toolError("no_tool_call", "call search, read or finish");
      answer = extractTextAnswer(text);
      predictedAnswerable = !isUnanswerableText(answer);
      done = true;
      return { content: "", isError: false, done: true };
    },
    reward() {
      const supportingTotal = supportingKeys.size;
      const supportingRead = [...supportingKeys].filter((key) => readKeys.has(key)).length;
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
        answer,
        predicted_answerable: predictedAnswerable,
        gold_answerable: task.example.answerable,
        read_idxs: readIdxs(),
        searches,
        reads,
        supporting_read: [...supportingKeys].filter((key) => readKeys.has(key)).length,
        supporting_total: supportingKeys.size,
      };
    },
  };
}
