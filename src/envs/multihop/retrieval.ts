import { CompactBm25 } from "./compact-bm25.ts";
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
  documents: CorpusDocument[];
  index: CompactBm25;
  /** Exact title → document positions, in corpus order. */
  byTitle: Map<string, number[]>;
  /** Lowercased, whitespace-collapsed title → document positions (fallback for `read`). */
  byLooseTitle: Map<string, number[]>;
}

export function documentKey(document: CorpusDocument): string {
  return `${document.title}\u0000${document.text}`;
}

function looseTitle(title: string): string {
  return title.toLowerCase().split(/\s+/u).filter(Boolean).join(" ");
}

export function createCorpus(documents: CorpusDocument[]): Corpus {
  const byTitle = new Map<string, number[]>();
  const byLooseTitle = new Map<string, number[]>();
  documents.forEach((document, position) => {
    (byTitle.get(document.title) ?? byTitle.set(document.title, []).get(document.title))?.push(position);
    const loose = looseTitle(document.title);
    (byLooseTitle.get(loose) ?? byLooseTitle.set(loose, []).get(loose))?.push(position);
  });
  const index = new CompactBm25(documents.map((document) => `${document.title} ${document.text}`));
  return { documents, index, byTitle, byLooseTitle };
}

const poolCorpora = new WeakMap<MultihopDataset, Corpus>();

/**
 * The example's own paragraphs as a corpus (`search` mode). Built per episode (10–20 paragraphs, well
 * under a millisecond) rather than cached, so a long run does not keep thousands of small indexes alive.
 */
export function exampleCorpus(example: MultihopExample): Corpus {
  return createCorpus(example.paragraphs.map((paragraph) => ({ title: paragraph.title, text: paragraph.text })));
}

/** Every distinct (title, text) paragraph of the loaded file, in file order (`pool` mode). */
export function poolCorpus(dataset: MultihopDataset): Corpus {
  let corpus = poolCorpora.get(dataset);
  if (!corpus) {
    const seen = new Set<string>();
    const documents: CorpusDocument[] = [];
    for (const example of dataset.examples) {
      for (const paragraph of example.paragraphs) {
        const document = { title: paragraph.title, text: paragraph.text };
        const key = documentKey(document);
        if (seen.has(key)) continue;
        seen.add(key);
        documents.push(document);
      }
    }
    corpus = createCorpus(documents);
    poolCorpora.set(dataset, corpus);
  }
  return corpus;
}

/** Documents titled `title` (exact, else case- and space-insensitive), in corpus order. */
export function documentsTitled(corpus: Corpus, title: string): number[] {
  return corpus.byTitle.get(title) ?? corpus.byLooseTitle.get(looseTitle(title)) ?? [];
}

/** The start of a paragraph, cut at a word boundary: search results show this, `read` shows all. */
export function snippet(text: string, length = 160): string {
  if (text.length <= length) return text;
  const cut = text.lastIndexOf(" ", length);
  return `${text.slice(0, cut > length / 2 ? cut : length)}…`;
}
