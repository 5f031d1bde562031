import { Bm25Index } from "../_kit/bm25.ts";
import type { MultihopDataset } from "./dataset.ts";
import type { MultihopExample } from "./records.ts";

/**
 * What `search` and `read` look into: the example's own paragraphs (`search` mode) or the deduplicated
 * paragraphs of the whole loaded file (`pool` mode, IRCoT-style; built once per loaded file and cached).
 * Queries are pure in-memory work.
 */
export interface CorpusDocument {
  title: string;
  text: string;
}

export interface Corpus {
  documents: readonly CorpusDocument[];
  index: Bm25Index;
  /** Exact title → document positions, in corpus order (built on first use for small corpora). */
  byTitle?: Map<string, number[]>;
  /** Lowercased, whitespace-collapsed title → document positions (fallback for `read`; built on first use). */
  byLooseTitle?: Map<string, number[]>;
}

export function documentKey(document: CorpusDocument): string {
  return `${document.title}\u0000${document.text}`;
}

function looseTitle(title: string): string {
  return title.toLowerCase().split(/\s+/u).filter(Boolean).join(" ");
}

function appendTo(map: Map<string, number[]>, key: string, position: number): void {
  const positions = map.get(key);
  if (positions) positions.push(position);
  else map.set(key, [position]);
}

/** A corpus over `documents`; each is indexed as its title followed by its text. */
export function createCorpus(documents: readonly CorpusDocument[], options: { byTitle?: Map<string, number[]> } = {}): Corpus {
  const index = new Bm25Index(documents.map((document) => [document.title, document.text]));
  return { documents, index, ...(options.byTitle ? { byTitle: options.byTitle } : {}) };
}

/**
 * The example's own paragraphs as a corpus (`search` mode). Built per episode (10–20 paragraphs, a few
 * microseconds) rather than cached, so a long run does not keep thousands of small indexes alive.
 */
export function exampleCorpus(example: MultihopExample): Corpus {
  return createCorpus(example.paragraphs);
}

const poolCorpora = new WeakMap<MultihopDataset, Corpus>();

/** Every distinct (title, text) paragraph of the loaded file, in file order (`pool` mode). */
export function poolCorpus(dataset: MultihopDataset): Corpus {
  let corpus = poolCorpora.get(dataset);
  if (!corpus) {
    const byTitle = new Map<string, number[]>();
    const documents: CorpusDocument[] = [];
    for (const example of dataset.examples) {
      for (const paragraph of example.paragraphs) {
        const sameTitle = byTitle.get(paragraph.title);
        if (sameTitle?.some((position) => (documents[position] as CorpusDocument).text === paragraph.text)) continue;
        if (sameTitle) sameTitle.push(documents.length);
        else byTitle.set(paragraph.title, [documents.length]);
        documents.push({ title: paragraph.title, text: paragraph.text });
      }
    }
    corpus = createCorpus(documents, { byTitle });
    poolCorpora.set(dataset, corpus);
  }
  return corpus;
}

/** Documents titled `title` (exact, else case- and space-insensitive), in corpus order. */
export function documentsTitled(corpus: Corpus, title: string): number[] {
  if (!corpus.byTitle) {
    corpus.byTitle = new Map();
    corpus.documents.forEach((document, position) => appendTo(corpus.byTitle as Map<string, number[]>, document.title, position));
  }
  const exact = corpus.byTitle.get(title);
  if (exact) return exact;
  if (!corpus.byLooseTitle) {
    corpus.byLooseTitle = new Map();
    corpus.documents.forEach((document, position) => appendTo(corpus.byLooseTitle as Map<string, number[]>, looseTitle(document.title), position));
  }
  return corpus.byLooseTitle.get(looseTitle(title)) ?? [];
}

/** The start of a paragraph, cut at a word boundary: search results show this, `read` shows all. */
export function snippet(text: string, length = 160): string {
  if (text.length <= length) return text;
  const cut = text.lastIndexOf(" ", length);
  return `${text.slice(0, cut > length / 2 ? cut : length)}…`;
}
