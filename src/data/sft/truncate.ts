/**
 * Fitting a conversation into the context window, on the message list before rendering (spec P7):
 * 1. "history": keep the system policy plus everything from the final real user query onward;
 * 2. "payload": if still too long, shorten the largest tool results, keeping head and tail around a
 *    visible marker. The system message, the final user request and the target are never touched.
 * A row that still does not fit is skipped as "too-long".
 */
import { RowSkip, type SftMessage, lastQueryIndex } from "./tau2-record.ts";

export type TruncationKind = "none" | "history" | "payload" | "history+payload";

export interface TruncationInfo {
  kind: TruncationKind;
  dropped_messages: number;
  shortened_payloads: number;
  removed_characters: number;
}

export interface FitResult {
  context: SftMessage[];
  fullLength: number;
  truncation: TruncationInfo;
}

/** Token count of the full render (context + target) of a candidate context. */
export type FullLength = (context: SftMessage[]) => number;

/** Token count of a bare text (a tool payload). */
export type TextLength = (text: string) => number;

/** The visible marker that replaces the middle of a shortened payload. */
export function truncationMarker(removedCharacters: number): string {
  return `\n[... ${removedCharacters} characters truncated by toolgym ...]\n`;
}

const markerPattern = /\n\[\.\.\. (\d+) characters truncated by toolgym \.\.\.\]\n/;

/** Splits a shortened payload into its head, removed count and tail; undefined when it has no marker. */
export function parseTruncatedPayload(text: string): { head: string; removed: number; tail: string } | undefined {
  const match = markerPattern.exec(text);
  if (!match) return undefined;
  return { head: text.slice(0, match.index), removed: Number(match[1]), tail: text.slice(match.index + match[0].length) };
}

/** Smallest payload kept, in tokens: below this a row is declared too long rather than gutted. */
const minimumPayloadTokens = 64;

function safeCut(text: string, index: number): number {
  const code = text.charCodeAt(index - 1);
  return code >= 0xd800 && code <= 0xdbff ? index - 1 : index;
}

function shorten(text: string, keepCharacters: number): string {
  if (keepCharacters >= text.length) return text;
  const headEnd = safeCut(text, Math.ceil(keepCharacters / 2));
  const tailStart = safeCut(text, text.length - Math.floor(keepCharacters / 2));
  return text.slice(0, headEnd) + truncationMarker(tailStart - headEnd) + text.slice(tailStart);
}

/** Level L such that Σ max(0, t_i − L) ≥ reduction (water-filling from the largest payload down). */
function waterLevel(tokens: number[], reduction: number): number {
  const sorted = [...tokens].sort((left, right) => right - left);
  let removed = 0;
  for (let index = 0; index < sorted.length; index++) {
    const next = sorted[index + 1] ?? 0;
    const capacity = (sorted[index] - next) * (index + 1);
    if (removed + capacity >= reduction) return Math.floor(sorted[index] - (reduction - removed) / (index + 1));
    removed += capacity;
  }
  return 0;
}

export function fitToLength(context: SftMessage[], maxTokens: number, fullLength: FullLength, textLength: TextLength): FitResult {
  const info: TruncationInfo = { kind: "none", dropped_messages: 0, shortened_payloads: 0, removed_characters: 0 };
  let length = fullLength(context);
  if (length <= maxTokens) return { context, fullLength: length, truncation: info };

  let kept = context;
  const hasSystem = context[0]?.role === "system";
  const query = lastQueryIndex(context);
  const firstKept = hasSystem ? 1 : 0;
  if (query > firstKept) {
    kept = [...(hasSystem ? [context[0]] : []), ...context.slice(query)];
    info.kind = "history";
    info.dropped_messages = query - firstKept;
    length = fullLength(kept);
    if (length <= maxTokens) return { context: kept, fullLength: length, truncation: info };
  }

  const payloadIndexes = kept.flatMap((message, index) => (message.role === "tool" && typeof message.content === "string" ? [index] : []));
  const originals = payloadIndexes.map((index) => kept[index].content as string);
  const tokens = originals.map(textLength);
  let reduction = length - maxTokens + 16 * payloadIndexes.length + 16;
  for (let attempt = 0; attempt < 8 && payloadIndexes.length > 0; attempt++) {
    const level = waterLevel(tokens, reduction);
    if (level < minimumPayloadTokens) break;
    const candidate = [...kept];
    let shortened = 0;
    let removed = 0;
    payloadIndexes.forEach((messageIndex, position) => {
      if (tokens[position] <= level) return;
      const original = originals[position];
      const keepCharacters = Math.floor((original.length * level) / tokens[position]);
      const text = shorten(original, keepCharacters);
      if (text === original) return;
      candidate[messageIndex] = { ...kept[messageIndex], content: text };
      shortened++;
      removed += parseTruncatedPayload(text)?.removed ?? 0;
    });
    length = fullLength(candidate);
    if (length <= maxTokens) {
      info.kind = info.kind === "history" ? "history+payload" : "payload";
      info.shortened_payloads = shortened;
      info.removed_characters = removed;
      return { context: candidate, fullLength: length, truncation: info };
    }
    reduction += length - maxTokens + 32 * (attempt + 1);
  }
  throw new RowSkip("too-long", `${length} tokens after keeping only the final user query and shortening tool results; the limit is ${maxTokens}`);
}
