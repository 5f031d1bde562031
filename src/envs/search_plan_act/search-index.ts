import { Bm25Index } from "../_kit/bm25.ts";
import type { Theme } from "./themes.ts";
import type { WorldRecord } from "./world.ts";

export interface SearchRequest {
  query: string;
  type?: string;
  limit: number;
  offset: number;
}

/**
 * Search over one world's records: exact name / code / id matches first, then BM25 over name + field
 * text. Built once per world state; `search` returns record positions in ranked order.
 */
const initialIndexes = new WeakMap<readonly WorldRecord[], RecordSearchIndex>();

/** The index of a world's initial records, built once and shared by every episode of the task. */
export function initialSearchIndex(records: readonly WorldRecord[], theme: Theme): RecordSearchIndex {
  let index = initialIndexes.get(records);
  if (!index) initialIndexes.set(records, (index = new RecordSearchIndex(records, theme)));
  return index;
}

export class RecordSearchIndex {
  private readonly bm25: Bm25Index;
  private readonly exact = new Map<string, number[]>();

  constructor(
    private readonly records: readonly WorldRecord[],
    theme: Theme,
  ) {
    const codeFields = new Map(theme.types.map((type) => [type.name, type.fields.filter((field) => field.code).map((field) => field.name)]));
    const documents: string[] = new Array(records.length);
    for (let position = 0; position < records.length; position++) {
      const record = records[position] as WorldRecord;
      let text = record.name;
      for (const key in record.fields) text += ` ${record.fields[key]}`;
      documents[position] = text;
      this.addExact(record.name.toLowerCase(), position);
      this.addExact(record.id.toLowerCase(), position);
      for (const field of codeFields.get(record.type) ?? []) this.addExact(String(record.fields[field]).toLowerCase(), position);
    }
    this.bm25 = new Bm25Index(documents);
  }

  private addExact(key: string, position: number): void {
    const list = this.exact.get(key);
    if (list) list.push(position);
    else this.exact.set(key, [position]);
  }

  /** Positions of every matching record, best first. */
  search(query: string, type: string | undefined): number[] {
    const key = query.trim().toLowerCase().replace(/\s+/g, " ");
    const exact = (this.exact.get(key) ?? []).filter((position) => type === undefined || this.records[position]?.type === type);
    const filter = type === undefined ? undefined : (position: number) => this.records[position]?.type === type;
    const ranked = this.bm25.search(query, { filter });
    if (exact.length === 0) return ranked.map((hit) => hit.docIndex);
    const result = [...exact];
    for (const hit of ranked) if (!exact.includes(hit.docIndex)) result.push(hit.docIndex);
    return result;
  }
}
