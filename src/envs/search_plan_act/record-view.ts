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
 * The view of `record`, from `views` or built into it. A task's initial records are shared by all its
 * episodes, whose views live in the task's cache (record names never change, so link target names stay
 * valid); an episode keeps the views of its changed copies in its own map and drops one after each change.
 */
export function recordView(record: WorldRecord, lookup: (id: string) => WorldRecord, views: Map<WorldRecord, RecordView>): RecordView {
  let view = views.get(record);
  if (!view) views.set(record, (view = buildView(record, lookup)));
  return view;
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
