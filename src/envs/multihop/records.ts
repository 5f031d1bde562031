/**
 * Validation of official records into one example shape shared by both datasets. A record that does
 * not match its official schema throws an Error whose message names the field; the reader turns it
 * into a one-line DataError with the file and line.
 */
export interface MultihopParagraph {
  /** MuSiQue `idx`; 2Wiki position in `context`. */
  idx: number;
  title: string;
  text: string;
  supporting: boolean;
}

export interface MultihopExample {
  id: string;
  question: string;
  answer: string;
  /** MuSiQue `answer_aliases` (2Wiki aliases come from `id_aliases.json` via `answerId`). */
  aliases: string[];
  /** 2Wiki `answer_id` (null when absent). */
  answerId: string | null;
  /** 2Wiki `type`, MuSiQue hop shape (`2hop`, `3hop1`...). */
  type: string;
  /** MuSiQue `answerable` (false for the unanswerable twins of MuSiQue-Full); always true for 2Wiki. */
  answerable: boolean;
  paragraphs: MultihopParagraph[];
}

type Json = Record<string, unknown>;

function object(value: unknown, what: string): Json {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`${what} must be a JSON object`);
  return value as Json;
}

function string(record: Json, key: string, what = "record"): string {
  const value = record[key];
  if (typeof value !== "string")
    throw new Error(`${what} field '${key}' must be a string (got ${value === undefined ? "nothing" : JSON.stringify(value)?.slice(0, 40)})`);
  return value;
}

function array(record: Json, key: string, what = "record"): unknown[] {
  const value = record[key];
  if (!Array.isArray(value)) throw new Error(`${what} field '${key}' must be a list`);
  return value;
}

/**
 * A MuSiQue record: MuSiQue-Ans (`musique_ans_v1.0_*.jsonl`) or MuSiQue-Full (`musique_full_v1.0_*.jsonl`,
 * where each id also has an unanswerable twin whose supporting paragraphs were swapped out).
 */
export function parseMusiqueRecord(value: unknown): MultihopExample {
  const record = object(value, "a MuSiQue line");
  const id = string(record, "id");
  const paragraphs = array(record, "paragraphs").map((item, position): MultihopParagraph => {
    const paragraph = object(item, `paragraphs[${position}]`);
    const idx = paragraph.idx;
    if (typeof idx !== "number" || !Number.isInteger(idx)) throw new Error(`paragraphs[${position}].idx must be an integer`);
    if (typeof paragraph.is_supporting !== "boolean")
      throw new Error(`paragraphs[${position}].is_supporting must be true or false (test files have no labels; use the dev file)`);
    return {
      idx,
      title: string(paragraph, "title", `paragraphs[${position}]`),
      text: string(paragraph, "paragraph_text", `paragraphs[${position}]`),
      supporting: paragraph.is_supporting,
    };
  });
  const aliases = array(record, "answer_aliases");
  if (aliases.some((alias) => typeof alias !== "string")) throw new Error("record field 'answer_aliases' must be a list of strings");
  if (typeof record.answerable !== "boolean") throw new Error("record field 'answerable' must be true or false");
  return {
    id,
    question: string(record, "question"),
    answer: string(record, "answer"),
    aliases: aliases as string[],
    answerId: null,
    type: id.split("__")[0] ?? "",
    answerable: record.answerable,
    paragraphs,
  };
}

/** A 2WikiMultihopQA record (`dev.json`, `data_ids` version; `answer_id` may be missing in `data.zip`). */
export function parseWikiRecord(value: unknown): MultihopExample {
  const record = object(value, "a 2Wiki record");
  const id = string(record, "_id");
  const supportingTitles = new Set<string>();
  array(record, "supporting_facts").forEach((fact, position) => {
    if (!Array.isArray(fact) || typeof fact[0] !== "string" || typeof fact[1] !== "number")
      throw new Error(`supporting_facts[${position}] must be [title, sentence_id] (test files have no labels; use the dev file)`);
    supportingTitles.add(fact[0]);
  });
  const paragraphs = array(record, "context").map((item, position): MultihopParagraph => {
    if (!Array.isArray(item) || typeof item[0] !== "string" || !Array.isArray(item[1]) || item[1].some((sentence) => typeof sentence !== "string")) {
      throw new Error(`context[${position}] must be [title, [sentences...]]`);
    }
    const title = item[0];
    return { idx: position, title, text: (item[1] as string[]).join(" ").trim(), supporting: supportingTitles.has(title) };
  });
  const answerId = record.answer_id;
  if (answerId !== undefined && answerId !== null && typeof answerId !== "string") throw new Error("record field 'answer_id' must be a string or null");
  return {
    id,
    question: string(record, "question"),
    answer: string(record, "answer"),
    aliases: [],
    answerId: answerId ?? null,
    type: typeof record.type === "string" ? record.type : "",
    answerable: true,
    paragraphs,
  };
}
