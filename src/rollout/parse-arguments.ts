import type { JsonValue } from "../core/index.ts";
import { parsePythonJson } from "../python-semantics/index.ts";

/**
 * `python`: parse as Python's `json.loads` does (the one python-semantics parser): `2.0` stays a float,
 * integers beyond 2^53 stay exact, `NaN`/`Infinity` are read. For environments that check their own arguments
 * as a Python benchmark does (`argumentPolicy: "environment"`, tau2); the value is then not plain JSON.
 */
export interface ParseArgumentOptions {
  python?: boolean;
}

/** Parses tool-call arguments from a JSON string. Returns an error message instead of throwing. */
export function parseToolArguments(
  raw: string | undefined | null,
  options: ParseArgumentOptions = {},
): { ok: true; value: JsonValue } | { ok: false; message: string } {
  if (raw === undefined || raw === null || raw.trim() === "") return { ok: true, value: {} };
  try {
    const parsed = options.python ? parsePythonJson(raw) : (JSON.parse(raw) as unknown);
    // keyword arguments need no key order: a top-level Map (integer-like keys) becomes an object
    const value = (parsed instanceof Map ? Object.fromEntries(parsed) : parsed) as JsonValue;
    const problem = objectProblem(value);
    return problem === undefined ? { ok: true, value } : { ok: false, message: problem };
  } catch (error) {
    return { ok: false, message: `tool arguments are not valid JSON (${(error as Error).message}): ${raw.slice(0, 200)}` };
  }
}

/**
 * A call's arguments as a driver receives them: model text (a JSON string, parsed here), nothing (no
 * arguments), or a value a client already parsed, which must be a JSON object too. The server checks a
 * request's `arguments` with `callRequestProblem` first.
 */
export function callArguments(raw: unknown, options: ParseArgumentOptions = {}): { ok: true; value: JsonValue } | { ok: false; message: string } {
  if (typeof raw === "string" || raw === undefined || raw === null) return parseToolArguments(raw, options);
  const problem = objectProblem(raw);
  return problem === undefined ? { ok: true, value: raw as JsonValue } : { ok: false, message: problem };
}

function objectProblem(value: unknown): string | undefined {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) return undefined;
  return `tool arguments must be a JSON object, got ${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value}`;
}

/**
 * What is wrong with a tool call a client sent already parsed (the environment server's request body), or
 * undefined: the name a non-empty string, the arguments a JSON object or absent. The server refuses such a
 * request (400) before it reaches the driver, which checks everything else.
 */
export function callRequestProblem(name: unknown, args: unknown): { field: "name" | "arguments"; message: string } | undefined {
  if (typeof name !== "string" || name === "") return { field: "name", message: "'name' must be the tool name as a string" };
  if (args !== undefined && args !== null && objectProblem(args) !== undefined)
    return { field: "arguments", message: "'arguments' must be a JSON object of the tool's parameters" };
  return undefined;
}
