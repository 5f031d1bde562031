/**
 * Okapi BM25 over a static set of documents (k1 = 1.2, b = 0.75 by default), with
 * idf(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5)). A document is either plain text or named fields;
 * fields are concatenated (one bag of words per document). Pure in-memory work; build once, query many.
 */
export type Bm25Document = string | { text: string } | { fields: Record<string, string | number> };

export interface Bm25Options {
  k1?: number;
  b?: number;
  /** Splits text into terms; defaults to lowercase alphanumeric runs. */
  tokenize?: (text: string) => string[];
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

const termPattern = /[\p{L}\p{N}]+/gu;

/** Lowercase runs of letters and digits: "PX-44712 Oriveth" → ["px", "44712", "oriveth"]. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(termPattern) ?? [];
}

function documentText(document: Bm25Document): string {
  if (typeof document === "string") return document;
  if ("text" in document) return document.text;
  return Object.values(document.fields).join(" ");
}

interface Posting {
  docs: number[];
  frequencies: number[];
}

export class Bm25Index {
  readonly size: number;
  readonly k1: number;
  readonly b: number;
  private readonly postings = new Map<string, Posting>();
  private readonly lengths: Float64Array;
  private readonly averageLength: number;
  private readonly split: (text: string) => string[];
  private readonly scores: Float64Array;

  constructor(documents: readonly Bm25Document[], options: Bm25Options = {}) {
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
    this.split = options.tokenize ?? tokenize;
    this.size = documents.length;
    this.lengths = new Float64Array(this.size);
    this.scores = new Float64Array(this.size);
    let total = 0;
    for (let docIndex = 0; docIndex < this.size; docIndex++) {
      const terms = this.split(documentText(documents[docIndex] as Bm25Document));
      this.lengths[docIndex] = terms.length;
      total += terms.length;
      const counts = new Map<string, number>();
      for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
      for (const [term, count] of counts) {
        let posting = this.postings.get(term);
        if (!posting) this.postings.set(term, (posting = { docs: [], frequencies: [] }));
        posting.docs.push(docIndex);
        posting.frequencies.push(count);
      }
    }
    this.averageLength = this.size === 0 ? 0 : total / this.size;
  }

  /** Inverse document frequency of a term (0 for an unseen term). */
  idf(term: string): number {
    const posting = this.postings.get(term);
    if (!posting) return 0;
    const n = posting.docs.length;
    return Math.log(1 + (this.size - n + 0.5) / (n + 0.5));
  }

  /** Ranked hits with a positive score, best first; ties break by document order. */
  search(query: string, options: Bm25SearchOptions = {}): Bm25Hit[] {
    const scores = this.scores;
    const touched: number[] = [];
    const seenTerms = new Set<string>();
    for (const term of this.split(query)) {
      if (seenTerms.has(term)) continue;
      seenTerms.add(term);
      const posting = this.postings.get(term);
      if (!posting) continue;
      const idf = this.idf(term);
      const { docs, frequencies } = posting;
      for (let i = 0; i < docs.length; i++) {
        const docIndex = docs[i] as number;
        const frequency = frequencies[i] as number;
        const norm = this.k1 * (1 - this.b + (this.b * (this.lengths[docIndex] as number)) / this.averageLength);
        if (scores[docIndex] === 0) touched.push(docIndex);
        scores[docIndex] = (scores[docIndex] as number) + (idf * frequency * (this.k1 + 1)) / (frequency + norm);
      }
    }
    const hits: Bm25Hit[] = [];
    for (const docIndex of touched) {
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
