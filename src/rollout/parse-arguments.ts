import type { JsonValue } from "../core/index.ts";

/** Parses tool-call arguments from a JSON string. Returns an error message instead of throwing. */
export function parseToolArguments(raw: string | undefined | null): { ok: true; value: JsonValue } | { ok: false; message: string } {
  if (raw === undefined || raw === null || raw.trim() === "") return { ok: true, value: {} };
  try {
    const value = JSON.parse(raw) as JsonValue;
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { ok: false, message: `tool arguments must be a JSON object, got ${Array.isArray(value) ? "an array" : typeof value}` };
    }
    return { ok: true, value };
  } catch (error) {
    return { ok: false, message: `tool arguments are not valid JSON (${(error as Error).message}): ${raw.slice(0, 200)}` };
  }
}
