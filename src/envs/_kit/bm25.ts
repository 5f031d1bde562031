import { TermBuilder, tokenize, type TermDocument, type TermSet } from "./bm25-terms.ts";

export { indexedTokens, tokenize } from "./bm25-terms.ts";

/**
 * Okapi BM25 over a static set of documents (k1 = 1.2, b = 0.75 by default), with
 * idf(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5)) and `tokenize`'s terms (lowercase letter/digit runs).
 * A document is plain text, a list of fields, `{text}` or `{fields}`; fields are tokenized as if joined
 * by spaces (one bag of words per document). Pure in-memory work; build once, query many.
 *
 * Built to index a whole 2Wiki dev file (125,760 paragraphs) quickly: documents become term ids without
 * a string per token or per term (`bm25-terms.ts`), and postings live in typed arrays built in two
 * passes over scratch space that every build reuses. `bm25.test.ts` checks tokens, scores and ranking
 * against a textbook implementation.
 */
export type Bm25Document = TermDocument | { text: string } | { fields: Record<string, string | number> };

export interface Bm25Options {
  k1?: number;
  b?: number;
}

export interface Bm25Hit {
  docIndex: number;
  score: number;
}

export interface Bm25SearchOptions {
  /** Keep only documents for which this returns true. */
  filter?: (docIndex: number) => boolean;
  /** At most this many hits (default: all documents with a positive score). */
  limit?: number;
}

function termDocument(document: Bm25Document): TermDocument {
  if (typeof document === "string" || Array.isArray(document)) return document as TermDocument;
  if ("text" in document) return document.text;
  return Object.values((document as { fields: Record<string, string | number> }).fields).map(String);
}

function grown(array: Int32Array<ArrayBuffer>, needed: number): Int32Array<ArrayBuffer> {
  if (needed <= array.length) return array;
  const next = new Int32Array(Math.max(needed, array.length * 2));
  next.set(array);
  return next;
}

/** Scratch space reused by every build (builds are synchronous, so one set per process suffices). */
class BuildScratch {
  readonly builder = new TermBuilder();
  /** By term id: frequency in the current document, document frequency. */
  frequencyOf = new Int32Array(1024);
  documentFrequencyOf = new Int32Array(1024);
  /** Term ids seen in the current document, in first-occurrence order. */
  touched = new Int32Array(1024);
  /** (term id, frequency) pairs, document after document; `documentEnds` marks where each document's pairs end. */
  pairs = new Int32Array(2 * 4096);
  documentEnds = new Int32Array(64);

  fit(terms: number, pairs: number): void {
    if (this.frequencyOf.length < terms) {
      this.frequencyOf = grown(this.frequencyOf, terms);
      this.documentFrequencyOf = grown(this.documentFrequencyOf, terms);
      this.touched = grown(this.touched, terms);
    }
    this.pairs = grown(this.pairs, 2 * pairs);
  }
}

const scratch = new BuildScratch();

export class Bm25Index {
  readonly size: number;
  readonly k1: number;
  readonly b: number;
  /** The distinct terms; postings of term t are offsets[t] .. offsets[t + 1]. */
  private readonly terms: TermSet;
  private readonly lengths: Float64Array;
  private readonly averageLength: number;
  private readonly offsets: Int32Array;
  /** Interleaved (docIndex, frequency) pairs, each term's run in document order. */
  private readonly postings: Int32Array;
  private scores: Float64Array | undefined;

  constructor(documents: readonly Bm25Document[], options: Bm25Options = {}) {
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
    const size = (this.size = documents.length);
    const lengths = (this.lengths = new Float64Array(size));
    const builder = scratch.builder;
    builder.begin();
    let seen = 0;
    let pairCount = 0;
    let total = 0;
    scratch.documentEnds = grown(scratch.documentEnds, size);
    for (let docIndex = 0; docIndex < size; docIndex++) {
      const tokenCount = builder.scan(termDocument(documents[docIndex] as Bm25Document));
      const terms = builder.terms;
      scratch.fit(terms, pairCount + tokenCount);
      const { ids } = builder;
      const { frequencyOf, documentFrequencyOf, touched, pairs } = scratch;
      // Terms first seen in this document start from zero counts.
      for (; seen < terms; seen++) documentFrequencyOf[seen] = frequencyOf[seen] = 0;
      let touchedCount = 0;
      for (let token = 0; token < tokenCount; token++) {
        const id = ids[token] as number;
        const frequency = frequencyOf[id] as number;
        if (frequency === 0) touched[touchedCount++] = id;
        frequencyOf[id] = frequency + 1;
      }
      lengths[docIndex] = tokenCount;
      total += tokenCount;
      for (let index = 0; index < touchedCount; index++) {
        const id = touched[index] as number;
        pairs[2 * pairCount] = id;
        pairs[2 * pairCount + 1] = frequencyOf[id] as number;
        pairCount++;
        documentFrequencyOf[id] = (documentFrequencyOf[id] as number) + 1;
        frequencyOf[id] = 0;
      }
      scratch.documentEnds[docIndex] = pairCount;
    }
    this.terms = builder.finish();
    this.averageLength = size === 0 ? 0 : total / size;
    const { documentFrequencyOf, pairs, documentEnds } = scratch;
    const offsets = (this.offsets = new Int32Array(seen + 1));
    for (let id = 0; id < seen; id++) offsets[id + 1] = (offsets[id] as number) + (documentFrequencyOf[id] as number);
    // Second pass: each pair to its term's run; documentFrequencyOf counts back down to 0 as runs fill from the end.
    const postings = (this.postings = new Int32Array(2 * pairCount));
    for (let docIndex = size - 1, pair = pairCount - 1; docIndex >= 0; docIndex--) {
      const start = docIndex === 0 ? 0 : (documentEnds[docIndex - 1] as number);
      for (; pair >= start; pair--) {
        const id = pairs[2 * pair] as number;
        const remaining = (documentFrequencyOf[id] as number) - 1;
        documentFrequencyOf[id] = remaining;
        const slot = 2 * ((offsets[id] as number) + remaining);
        postings[slot] = docIndex;
        postings[slot + 1] = pairs[2 * pair + 1] as number;
      }
    }
  }

  private idfOf(id: number): number {
    const n = (this.offsets[id + 1] as number) - (this.offsets[id] as number);
    return Math.log(1 + (this.size - n + 0.5) / (n + 0.5));
  }

  /** Inverse document frequency of a term (0 for an unseen term). */
  idf(term: string): number {
    const id = this.terms.find(term);
    return id === -1 ? 0 : this.idfOf(id);
  }

  /** Ranked hits with a positive score, best first; ties break by document order. */
  search(query: string, options: Bm25SearchOptions = {}): Bm25Hit[] {
    this.scores ??= new Float64Array(this.size);
    const { scores, postings, lengths, averageLength, k1, b } = this;
    const hitDocs: number[] = [];
    const seen = new Set<string>();
    for (const term of tokenize(query)) {
      if (seen.has(term)) continue;
      seen.add(term);
      const id = this.terms.find(term);
      if (id === -1) continue;
      const idf = this.idfOf(id);
      const end = 2 * (this.offsets[id + 1] as number);
      for (let slot = 2 * (this.offsets[id] as number); slot < end; slot += 2) {
        const docIndex = postings[slot] as number;
        const frequency = postings[slot + 1] as number;
        const norm = k1 * (1 - b + (b * (lengths[docIndex] as number)) / averageLength);
        if (scores[docIndex] === 0) hitDocs.push(docIndex);
        scores[docIndex] = (scores[docIndex] as number) + (idf * frequency * (k1 + 1)) / (frequency + norm);
      }
    }
    const hits: Bm25Hit[] = [];
    for (const docIndex of hitDocs) {
      const score = scores[docIndex] as number;
      scores[docIndex] = 0;
      if (score > 0 && (!options.filter || options.filter(docIndex))) hits.push({ docIndex, score });
    }
    hits.sort((left, right) => right.score - left.score || left.docIndex - right.docIndex);
    return options.limit === undefined ? hits : hits.slice(0, options.limit);
  }

  /** The BM25 score of one document for a query. */
  score(query: string, docIndex: number): number {
    return this.search(query, { filter: (candidate) => candidate === docIndex })[0]?.score ?? 0;
  }
}

export function createBm25Index(documents: readonly Bm25Document[], options: Bm25Options = {}): Bm25Index {
  return new Bm25Index(documents, options);
}
