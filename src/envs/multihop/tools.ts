import { z } from "zod";
import { toolError, toolResult } from "../../core/index.ts";
import { createToolbox, defineTool, type Toolbox } from "../_kit/toolbox.ts";
import { isUnanswerableText } from "./musique-full.ts";
import { documentKey, documentsTitled, snippet, type Corpus } from "./retrieval.ts";

/** Paragraphs one `read` returns; a title with more is paged with `offset`. */
const READ_PAGE = 3;

/** What the multihop tools read and change during one episode (the reward reads it afterwards). */
export interface MultihopToolState {
  corpus: Corpus;
  /** Hits a search returns when the model gives no `limit`. */
  topK: number;
  /** Every query so far, in order: a title with many paragraphs is read best-matching first. */
  queries: string[];
  /** documentKey of every paragraph the agent has read. */
  readKeys: Set<string>;
  searches: number;
  reads: number;
  answer: string | null;
  /** The agent's answerability verdict; null until it answers. */
  predictedAnswerable: boolean | null;
  done: boolean;
}

const search = defineTool({
  name: "search",
  description:
    "Search the paragraph collection (BM25 over titles and text). Returns up to `limit` hits {title, snippet}, best first; read a title to see its full paragraph.",
  kind: "read",
  input: z.strictObject({
    // a refinement, not min(1): whitespace is no query either, and the model-visible schema stays as it was
    query: z
      .string()
      .refine((query) => query.trim() !== "", "needs some keywords")
      .describe("Keywords: the entity and the fact you are looking for."),
    limit: z.number().int().min(1).max(10).optional().describe("Number of hits (default 5)."),
  }),
  execute(state: MultihopToolState, { query, limit }) {
    state.searches++;
    state.queries.push(query);
    const { documents, index } = state.corpus;
    const hits = index.search(query, { limit: limit ?? state.topK });
    if (hits.length === 0) return toolResult({ hits: [], note: "no paragraphs match; try other keywords" });
    return toolResult({
      hits: hits.map((hit) => ({ title: documents[hit.docIndex]?.title, snippet: snippet(documents[hit.docIndex]?.text ?? "") })),
    });
  },
});

const read = defineTool({
  name: "read",
  description:
    "Read the full paragraph(s) with this exact title (as returned by search). Returns {title, total, paragraphs: [text...]}; pass offset to page when a title has more than 3 paragraphs.",
  kind: "read",
  input: z.strictObject({
    title: z.string().describe("A paragraph title from the search results."),
    offset: z.number().int().min(0).optional().describe("Skip this many paragraphs (default 0)."),
  }),
  execute(state: MultihopToolState, { title, offset = 0 }) {
    const { corpus } = state;
    let matches = documentsTitled(corpus, title);
    if (matches.length === 0) {
      const suggestions = corpus.index.search(title, { limit: 3 }).map((hit) => corpus.documents[hit.docIndex]?.title);
      return toolError("unknown_title", `no paragraph titled '${title}'; use a title from the search results`, { did_you_mean: suggestions });
    }
    state.reads++;
    if (matches.length > READ_PAGE && state.queries.length > 0) {
      const query = state.queries.join(" ");
      const scores = new Map(matches.map((docIndex) => [docIndex, corpus.index.score(query, docIndex)]));
      matches = [...matches].sort((left, right) => (scores.get(right) as number) - (scores.get(left) as number) || left - right);
    }
    const page = matches.slice(offset, offset + READ_PAGE).map((docIndex) => corpus.documents[docIndex] as { title: string; text: string });
    for (const document of page) state.readKeys.add(documentKey(document));
    return toolResult({ title: page[0]?.title ?? title, total: matches.length, offset, paragraphs: page.map((document) => document.text) });
  },
});

const finish = defineTool({
  name: "finish",
  description: "End the episode with your final answer: a short answer (an entity, date, number, yes or no), not a sentence.",
  kind: "finish",
  input: z.strictObject({ answer: z.string().describe("The answer as a short phrase.") }),
  execute(state: MultihopToolState, { answer }) {
    state.answer = answer;
    state.predictedAnswerable = !isUnanswerableText(answer);
    state.done = true;
    return toolResult({ ok: true }, { done: true });
  },
});

/** MuSiQue-Full's finish: the agent may abstain with `answerable: false` instead of answering. */
const finishOrAbstain = defineTool({
  name: "finish",
  description:
    "End the episode with your final answer: a short answer (an entity, date, number, yes or no), not a sentence; or answerable: false when the paragraphs do not contain what the question needs.",
  kind: "finish",
  input: z.strictObject({
    answer: z.string().optional().describe("The answer as a short phrase (may be omitted when answerable is false)."),
    answerable: z.boolean().optional().describe("false: the paragraphs cannot answer this question. Default true."),
  }),
  execute(state: MultihopToolState, { answer, answerable }) {
    const abstains = answerable === false;
    // Checked here rather than as a zod refinement so the message names both ways to finish.
    if (answer === undefined && !abstains)
      return toolError("invalid_arguments", "finish needs {answer: string}, or {answerable: false} when the paragraphs cannot answer the question");
    state.answer = answer ?? "";
    state.predictedAnswerable = !abstains && !isUnanswerableText(state.answer);
    state.done = true;
    return toolResult({ ok: true }, { done: true });
  },
});

const answeringToolbox = createToolbox<MultihopToolState>([search, read, finish]);
const abstainingToolbox = createToolbox<MultihopToolState>([search, read, finishOrAbstain]);

/** The tools of a search or pool episode; `full` (MuSiQue-Full) lets finish abstain. */
export function multihopToolbox(full: boolean): Toolbox<MultihopToolState> {
  return full ? abstainingToolbox : answeringToolbox;
}
