import type { Family, RewardVariant } from "./config.ts";
import type { FieldValue, WorldRecord } from "./world.ts";

/** How the task text names the record a chain starts from. Never by record id. */
export type Descriptor =
  | { by: "name"; type: string; id: string; name: string }
  | { by: "code"; type: string; id: string; field: string; code: string }
  | { by: "attribute"; type: string; id: string; word: string; field: string; value: FieldValue }
  | { by: "missing"; type: string; name: string };

/** A start record followed through relations; `ids` are the records visited (hidden). */
export interface Chain {
  start: Descriptor;
  relations: string[];
  ids: string[];
}

export type Goal =
  | { kind: "lookup"; chain: Chain; field: string | null; answer: string }
  | { kind: "update"; chain: Chain; field: string; value: FieldValue }
  | { kind: "link"; source: Chain; relation: string; target: Chain }
  | { kind: "copy"; from: Chain; fromField: string; to: Chain; toField: string; value: FieldValue }
  | { kind: "conditional"; chain: Chain; testField: string; threshold: number; field: string; thenValue: string; elseValue: string; value: string }
  | { kind: "impossible"; chain: Chain; reason: string; asked: Goal["kind"] };

export type Requirement =
  { kind: "field"; id: string; field: string; value: FieldValue; mustBeGrounded: boolean } | { kind: "link"; source: string; relation: string; target: string };

export interface SearchPlanTask {
  env: string;
  split: string;
  seed: number;
  index: number;
  theme: string;
  family: Family;
  /** The goal as the agent reads it. */
  text: string;
  records: WorldRecord[];
  goals: Goal[];
  status: "done" | "impossible";
  /** The expected lookup answer (null for mutation and impossible tasks). */
  answer: string | null;
  requirements: Requirement[];
  /** Values the task text states (normalised); writing them counts as grounded. */
  statedValues: string[];
  /** Hops of the longest chain (records visited). */
  hops: number;
  /** Extra tool calls over the plan length before the stop score decays (from the config). */
  slack: number;
  /** The config's reward variant when it is not the standard one (absent: standard). */
  rewardVariant?: RewardVariant;
}

const isQuote = (code: number): boolean => code === 0x22 || code === 0x27 || code === 0x60;

/**
 * The text without its leading and trailing runs of quotes ("'`): what `/^["'`]+|["'`]+$/g` removes, in one
 * pass. Why not that regex: it tries its trailing run from every quote, quadratic in a run of quotes that does
 * not reach the end (80,000 quotes between two letters held the server's loop for 13 s; issue 36).
 */
function stripQuotes(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isQuote(text.charCodeAt(start))) start++;
  while (end > start && isQuote(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/**
 * Normalises an answer or a value for exact comparison: trimmed, lowercased, whitespace collapsed,
 * surrounding quotes and a trailing period removed; numbers lose "$" and thousands separators.
 */
export function normalizeValue(value: unknown): string {
  const text = stripQuotes(String(value).trim().toLowerCase().replace(/\s+/g, " ")).replace(/\.$/, "").trim();
  if (/^\$?-?[\d,]*\d(\.\d+)?$/.test(text)) {
    const number = Number(text.replace(/[$,]/g, ""));
    if (Number.isFinite(number)) return String(number);
  }
  return text;
}
