import { Bm25Index } from "../_kit/bm25.ts";
import type { Theme } from "./themes.ts";
import type { WorldRecord } from "./world.ts";

export interface SearchRequest {
  query: string;
  type?: string;
  limit: number;
  offset: number;
}

/** The text BM25 indexes for a record: its name, then its field values in field order. */
function documentOf(record: WorldRecord): string {
  let text = record.name;
  for (const key in record.fields) text += ` ${record.fields[key]}`;
  return text;
}

/**
 * What a world's search indexes share across its states, from its initial records: the exact-match
 * keys (names, ids and codes, which no tool changes) and each record's indexed text. An index of a
 * changed state reuses both and re-reads only the records that changed.
 */
export class SearchBasis {
  readonly exact = new Map<string, number[]>();
  readonly documents: string[];
  /** Record types by position (no tool changes a type): what `search` filters on. */
  readonly types: string[];

  constructor(records: readonly WorldRecord[], theme: Theme) {
    const codeFields = new Map(theme.types.map((type) => [type.name, type.fields.filter((field) => field.code).map((field) => field.name)]));
    this.documents = new Array<string>(records.length);
    this.types = new Array<string>(records.length);
    for (let position = 0; position < records.length; position++) {
      const record = records[position] as WorldRecord;
      this.documents[position] = documentOf(record);
      this.types[position] = record.type;
      this.addExact(record.name.toLowerCase(), position);
      this.addExact(record.id.toLowerCase(), position);
      for (const field of codeFields.get(record.type) ?? []) this.addExact(String(record.fields[field]).toLowerCase(), position);
    }
  }

  private addExact(key: string, position: number): void {
    const list = this.exact.get(key);
    if (list) list.push(position);
    else this.exact.set(key, [position]);
  }
}

/**
 * Search over one world state: exact name / code / id matches first, then BM25 over name + field text.
 * Built once per state (the initial one is shared through the task's cache); `search` returns record
 * positions in ranked order.
 */
export class RecordSearchIndex {
  private readonly bm25: Bm25Index;

  /**
   * `records` is the state, in the basis's order; `changed` the positions whose record differs from the
   * initial one (none: the initial state).
   */
  constructor(
    private readonly basis: SearchBasis,
    records: readonly WorldRecord[],
    changed: readonly number[],
  ) {
    let documents = basis.documents;
    if (changed.length > 0) {
      documents = documents.slice();
      for (const position of changed) documents[position] = documentOf(records[position] as WorldRecord);
    }
    this.bm25 = new Bm25Index(documents);
  }

  /** Positions of every matching record, best first. */
  search(query: string, type: string | undefined): number[] {
    const types = this.basis.types;
    const key = query.trim().toLowerCase().replace(/\s+/g, " ");
    const exact = (this.basis.exact.get(key) ?? []).filter((position) => type === undefined || types[position] === type);
    const filter = type === undefined ? undefined : (position: number) => types[position] === type;
    const ranked = this.bm25.search(query, { filter });
    if (exact.length === 0) return ranked.map((hit) => hit.docIndex);
    const result = [...exact];
    for (const hit of ranked) if (!exact.includes(hit.docIndex)) result.push(hit.docIndex);
    return result;
  }
}
