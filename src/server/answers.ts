import { ServerError, ToolgymError } from "../core/index.ts";
import type { CallOutcome } from "./session-types.ts";

/**
 * What the protocol core (protocol.ts) answers, independent of any transport: a status and a JSON body
 * with its byte length (the Content-Length), plus the JSON helpers every route shares — request bodies
 * parsed with a depth limit, errors as `{error: {code, message}}`, and the tool-call serializer.
 */
export interface Answer {
  status: number;
  /** The JSON body. */
  text: string;
  /** Its length in UTF-8 bytes. */
  bytes: number;
}

export function jsonAnswer(status: number, text: string): Answer {
  return { status, text, bytes: Buffer.byteLength(text) };
}

export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

export function errorAnswer(status: number, code: string, message: string): Answer {
  return jsonAnswer(status, JSON.stringify(errorBody(code, message)));
}

/** The answer to anything a route throws: 4xx for `ToolgymError`s, 500 only for real bugs. */
export function failure(error: unknown): Answer {
  if (ToolgymError.isInstance(error) && error instanceof ServerError) return errorAnswer(error.status, error.code, error.message);
  if (ToolgymError.isInstance(error)) return errorAnswer(400, error.code, error.message);
  return errorAnswer(500, "INTERNAL", `unexpected server error: ${(error as Error)?.message ?? String(error)}; please report it`);
}

/** Deepest nesting accepted in a request body or frame: tool arguments are shallow, and deeper values would overflow the stack later. */
export const MAX_JSON_DEPTH = 64;

/** Whether a parsed JSON value nests objects and arrays deeper than `limit` (walked without recursion). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const current = stack.pop() as object;
    const depth = depths.pop() as number;
    if (depth > limit) return true;
    for (const key in current) {
      const inner = (current as Record<string, unknown>)[key];
      if (typeof inner === "object" && inner !== null) {
        stack.push(inner);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/**
 * Parses a request body that must be a JSON object; empty text counts as `{}`, and a leading byte-order
 * mark is dropped (as a Fetch `Request.text()` does). Anything else throws a 400 naming the problem.
 */
export function parseObject(body: string, what = "the request body"): Record<string, unknown> {
  const text = body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ServerError({
      code: "INVALID_JSON",
      status: 400,
      message: `${what} is not valid JSON (${(error as Error).message.slice(0, 120)}); send a JSON object`,
    });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ServerError({ code: "INVALID_BODY", status: 400, message: `${what} must be a JSON object` });
  }
  // Nesting past the limit takes more than two brackets a level: short bodies (most tool calls) are not walked.
  if (text.length > 2 * MAX_JSON_DEPTH && nestsDeeperThan(value, MAX_JSON_DEPTH))
    throw new ServerError({ code: "JSON_TOO_DEEP", status: 400, message: `${what} nests deeper than ${MAX_JSON_DEPTH} levels; send flat values` });
  return value as Record<string, unknown>;
}

/** A session config sent as JSON text: parsed with a body's checks (depth included), so it cannot skip them. */
export function parseConfigText(text: string): Record<string, unknown> {
  try {
    return parseObject(text, "'config' (JSON text)");
  } catch (error) {
    if (error instanceof ServerError && error.code !== "JSON_TOO_DEEP") throw new ServerError({ code: "CONFIG_INVALID", status: 400, message: error.message });
    throw error;
  }
}

/**
 * Bodies past the limit but declared at most this long are read and thrown away after the 413, so the
 * connection stays usable. Why: a client is usually still sending when the 413 goes out; closing then
 * resets the connection and the client sees a write error (EPIPE) instead of the answer. Longer declared
 * bodies close the connection at once.
 */
export const discardLimitBytes = 64 * 1024 * 1024;

/** Whether a refused body of this declared length is drained (else the connection closes). */
export function discardsBody(contentLength: string | undefined): boolean {
  if (contentLength === undefined) return false;
  const length = Number(contentLength);
  return Number.isSafeInteger(length) && length <= discardLimitBytes;
}

const CONTENT = '{"content":';
const IS_ERROR = ',"is_error":';
const ERROR_KIND = ',"error_kind":';
const DONE = ',"done":';
const CALLS = ',"calls":';
const FIXED_BYTES = CONTENT.length + IS_ERROR.length + DONE.length + CALLS.length + "}".length;

/**
 * The 200 answer to a tool call: `JSON.stringify(outcome)`, byte for byte, written out field by field, and
 * its byte length summed from the pieces. Why: about half the cost of the generic serializer walking the
 * object, and the joined text is never measured (measuring a joined string flattens it into a copy first);
 * it runs for every tool call. Anything not of the expected types goes to `JSON.stringify` itself. The
 * fields are those `SessionStore.call` returns, in its order.
 */
export function outcomeAnswer(outcome: CallOutcome): Answer {
  const { content, is_error: isError, error_kind: errorKind, done, calls } = outcome;
  if (
    typeof content !== "string" ||
    typeof isError !== "boolean" ||
    typeof done !== "boolean" ||
    !Number.isSafeInteger(calls) ||
    (errorKind !== undefined && typeof errorKind !== "string")
  )
    return jsonAnswer(200, JSON.stringify(outcome));
  const contentJson = JSON.stringify(content);
  const kindJson = errorKind === undefined ? undefined : JSON.stringify(errorKind);
  const callsText = String(calls);
  const text = `${CONTENT}${contentJson}${IS_ERROR}${isError}${kindJson === undefined ? "" : ERROR_KIND + kindJson}${DONE}${done}${CALLS}${callsText}}`;
  // The literals, booleans and digits are ASCII: one byte a character.
  const bytes =
    FIXED_BYTES +
    Buffer.byteLength(contentJson) +
    (kindJson === undefined ? 0 : ERROR_KIND.length + Buffer.byteLength(kindJson)) +
    (isError ? 4 : 5) +
    (done ? 4 : 5) +
    callsText.length;
  return { status: 200, text, bytes };
}
