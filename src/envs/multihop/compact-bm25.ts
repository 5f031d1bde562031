import { tokenize } from "../_kit/bm25.ts";

/**
 * Okapi BM25 with the exact formula, tokenizer and tie-breaking of `src/envs/_kit/bm25.ts` (k1 = 1.2,
 * b = 0.75, idf = ln(1 + (N − n + 0.5)/(n + 0.5)), lowercase letter/digit runs, ties by document order),
 * stored as compressed postings (term ids, typed arrays) and tokenized without a string per token on
 * ASCII text, so that indexing a 2Wiki-sized pool is several times faster than the kit's index.
 * `compact-bm25.test.ts` checks rankings and scores against the kit.
 */
export interface CompactHit {
  docIndex: number;
  score: number;
}

const K1 = 1.2;
const B = 0.75;
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Term → id without allocating a string per token: open addressing on an FNV-1a hash of the
 * lowercased characters, verified character by character; only new terms are sliced out.
 */
class TermTable {
  readonly terms: string[] = [];
  private hashes: number[] = [];
  private slots: Int32Array;

  /** `expectedTerms`: a guess of the number of distinct terms (the table grows past it). */
  constructor(expectedTerms: number) {
    let size = 64;
    while (size < expectedTerms * 2) size *= 2;
    this.slots = new Int32Array(size).fill(-1);
  }

  /** Id of the lowercased ASCII span text[start, end), created when new. */
  idOfSpan(text: string, start: number, end: number): number {
    let hash = 2166136261;
    for (let position = start; position < end; position++) {
      let code = text.charCodeAt(position);
      if (code >= 65 && code <= 90) code += 32;
      hash = Math.imul(hash ^ code, 16777619);
    }
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const id = this.slots[slot] as number;
      if (id === -1) break;
      if (this.hashes[id] === hash && this.matches(this.terms[id] as string, text, start, end)) return id;
      slot = (slot + 1) & mask;
    }
    return this.insert(text.slice(start, end).toLowerCase(), hash, slot);
  }

  /** Id of an already lowercased term (the non-ASCII path), created when new. */
  idOfTerm(term: string): number {
    const hash = this.hashOf(term);
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const id = this.slots[slot] as number;
      if (id === -1) break;
      if (this.hashes[id] === hash && this.terms[id] === term) return id;
      slot = (slot + 1) & mask;
    }
    return this.insert(term, hash, slot);
  }

  /** Id of a lowercased term, or -1 when the corpus does not contain it. */
  find(term: string): number {
    const hash = this.hashOf(term);
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const id = this.slots[slot] as number;
      if (id === -1 || (this.hashes[id] === hash && this.terms[id] === term)) return id;
    }
  }

  private hashOf(term: string): number {
    let hash = 2166136261;
    for (let position = 0; position < term.length; position++) hash = Math.imul(hash ^ term.charCodeAt(position), 16777619);
    return hash;
  }

  private matches(term: string, text: string, start: number, end: number): boolean {
    if (term.length !== end - start) return false;
    for (let position = 0; position < term.length; position++) {
      let code = text.charCodeAt(start + position);
      if (code >= 65 && code <= 90) code += 32;
      if (code !== term.charCodeAt(position)) return false;
    }
    return true;
  }

  private insert(term: string, hash: number, slot: number): number {
    const id = this.terms.length;
    this.terms.push(term);
    this.hashes.push(hash);
    this.slots[slot] = id;
    if (this.terms.length * 2 > this.slots.length) this.rehash();
    return id;
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = this.slots.length - 1;
    this.hashes.forEach((hash, id) => {
      let slot = hash & mask;
      while (this.slots[slot] !== -1) slot = (slot + 1) & mask;
      this.slots[slot] = id;
    });
  }
}

/** Term ids of a document in order: ASCII text is scanned in place, other text goes through the kit's tokenizer. */
function forEachTermId(table: TermTable, text: string, sink: (id: number) => void): void {
  if (NON_ASCII.test(text)) {
    for (const term of tokenize(text)) sink(table.idOfTerm(term));
    return;
  }
  let start = -1;
  for (let position = 0; position <= text.length; position++) {
    const code = position < text.length ? text.charCodeAt(position) : 32;
    if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57)) {
      if (start < 0) start = position;
    } else if (start >= 0) {
      sink(table.idOfSpan(text, start, position));
      start = -1;
    }
  }
}

function grow(array: Int32Array<ArrayBuffer>, needed: number): Int32Array<ArrayBuffer> {
  if (needed <= array.length) return array;
  const next = new Int32Array(Math.max(needed, array.length * 2));
  next.set(array);
  return next;
}

export class CompactBm25 {
  readonly size: number;
  private readonly table: TermTable;
  private readonly offsets: Int32Array;
  private readonly postingDocs: Int32Array;
  private readonly postingFrequencies: Int32Array;
  private readonly lengths: Float64Array;
  private readonly averageLength: number;
  private readonly scores: Float64Array;

  constructor(documents: readonly string[]) {
    this.size = documents.length;
    let characters = 0;
    for (const document of documents) characters += document.length;
    this.table = new TermTable(Math.min(characters / 8, 1 << 20));
    this.lengths = new Float64Array(this.size);
    this.scores = new Float64Array(this.size);
    let tripleTerms = new Int32Array(64);
    let tripleDocs = new Int32Array(64);
    let tripleFrequencies = new Int32Array(64);
    let triples = 0;
    let frequency = new Int32Array(64);
    let documentFrequency = new Int32Array(64);
    const touched: number[] = [];
    let total = 0;
    for (let docIndex = 0; docIndex < this.size; docIndex++) {
      let length = 0;
      forEachTermId(this.table, documents[docIndex] as string, (id) => {
        length++;
        if (id >= frequency.length) {
          frequency = grow(frequency, id + 1);
          documentFrequency = grow(documentFrequency, id + 1);
        }
        if (frequency[id] === 0) touched.push(id);
        frequency[id] = (frequency[id] as number) + 1;
      });
      this.lengths[docIndex] = length;
      total += length;
      tripleTerms = grow(tripleTerms, triples + touched.length);
      tripleDocs = grow(tripleDocs, triples + touched.length);
      tripleFrequencies = grow(tripleFrequencies, triples + touched.length);
      for (const id of touched) {
        tripleTerms[triples] = id;
        tripleDocs[triples] = docIndex;
        tripleFrequencies[triples] = frequency[id] as number;
        triples++;
        documentFrequency[id] = (documentFrequency[id] as number) + 1;
        frequency[id] = 0;
      }
      touched.length = 0;
    }
    const termCount = this.table.terms.length;
    this.offsets = new Int32Array(termCount + 1);
    for (let id = 0; id < termCount; id++) this.offsets[id + 1] = (this.offsets[id] as number) + (documentFrequency[id] as number);
    const cursor = this.offsets.slice(0, termCount);
    this.postingDocs = new Int32Array(triples);
    this.postingFrequencies = new Int32Array(triples);
    for (let triple = 0; triple < triples; triple++) {
      const id = tripleTerms[triple] as number;
      const slot = cursor[id] as number;
      cursor[id] = slot + 1;
      this.postingDocs[slot] = tripleDocs[triple] as number;
      this.postingFrequencies[slot] = tripleFrequencies[triple] as number;
    }
    this.averageLength = this.size === 0 ? 0 : total / this.size;
  }

  /** Inverse document frequency of a term (0 for an unseen term). */
  idf(term: string): number {
    const id = this.table.find(term);
    if (id === -1) return 0;
    const n = (this.offsets[id + 1] as number) - (this.offsets[id] as number);
    return Math.log(1 + (this.size - n + 0.5) / (n + 0.5));
  }

  /** Ranked hits with a positive score, best first; ties break by document order. */
  search(query: string, options: { limit?: number; filter?: (docIndex: number) => boolean } = {}): CompactHit[] {
    const scores = this.scores;
    const touched: number[] = [];
    const seen = new Set<string>();
    for (const term of tokenize(query)) {
      if (seen.has(term)) continue;
      seen.add(term);
      const id = this.table.find(term);
      if (id === -1) continue;
      const idf = this.idf(term);
      const end = this.offsets[id + 1] as number;
      for (let slot = this.offsets[id] as number; slot < end; slot++) {
        const docIndex = this.postingDocs[slot] as number;
        const frequency = this.postingFrequencies[slot] as number;
        const norm = K1 * (1 - B + (B * (this.lengths[docIndex] as number)) / this.averageLength);
        if (scores[docIndex] === 0) touched.push(docIndex);
        scores[docIndex] = (scores[docIndex] as number) + (idf * frequency * (K1 + 1)) / (frequency + norm);
      }
    }
    const hits: CompactHit[] = [];
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
