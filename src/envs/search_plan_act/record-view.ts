import { normalizeValue } from "./task.ts";
import type { WorldRecord } from "./world.ts";

/**
 * What the tools show of one record state, computed once: the `read_record` result text, the search
 * snippet and the normalised values an observation grounds. Read-heavy episodes reuse it instead of
 * normalising and serialising the record on every call.
 */
export interface RecordView {
  /** The JSON of `read_record`: {id, type, name, fields, links: [{relation, target_id, target_name}]}. */
  content: string;
  /** "field: value; field: value" over the first two fields (search hits). */
  snippet: string;
  /** The normalised name, then the normalised field values in field order. */
  values: string[];
  /** Link targets: ids and normalised names, in link order. */
  linkIds: string[];
  linkNames: string[];
}

/**
 * Views keyed by record object. A task's initial records are shared by all its episodes (record names
 * never change, so the link target names stay valid); an episode's mutated copy gets its own view,
 * which `forgetRecordView` drops after each change.
 */
const views = new WeakMap<WorldRecord, RecordView>();

export function recordView(record: WorldRecord, lookup: (id: string) => WorldRecord): RecordView {
  let view = views.get(record);
  if (!view) views.set(record, (view = buildView(record, lookup)));
  return view;
}

export function forgetRecordView(record: WorldRecord): void {
  views.delete(record);
}

function buildView(record: WorldRecord, lookup: (id: string) => WorldRecord): RecordView {
  const values = [normalizeValue(record.name)];
  let snippet = "";
  let count = 0;
  for (const key in record.fields) {
    const value = record.fields[key];
    values.push(normalizeValue(value));
    if (count++ < 2) snippet += `${count > 1 ? "; " : ""}${key}: ${value}`;
  }
  const linkIds: string[] = [];
  const linkNames: string[] = [];
  const links = record.links.map((link) => {
    const target = lookup(link.target);
    linkIds.push(target.id);
    linkNames.push(normalizeValue(target.name));
    return { relation: link.relation, target_id: target.id, target_name: target.name };
  });
  const content = JSON.stringify({ id: record.id, type: record.type, name: record.name, fields: record.fields, links });
  return { content, snippet, values, linkIds, linkNames };
}
