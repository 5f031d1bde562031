/**
 * Python's built-in semantics on JSON values: exceptions with Python's texts, `==`, type names, `int()`,
 * iteration, truthiness, `repr`/`str` of scalars, dict-key hashing, `in`, `count`, `lower` and `strip`.
 */
import { PythonFloat, pythonFloatRepr } from "./float.ts";

/** A Python exception: its type and the message `str(exception)` prints. */
export class PythonError extends Error {
  constructor(
    readonly pythonType: string,
    message: string,
  ) {
    super(message);
  }

  /** The exception as Python prints its last line, e.g. `KeyError: 'id'`. */
  get official(): string {
    return `${this.pythonType}: ${this.message}`;
  }
}

/** Python's type name of a JSON value (a number with a fraction, or a PythonFloat, is a float). */
export function pythonTypeName(value: unknown): string {
  if (value === null || value === undefined) return "NoneType";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (typeof value === "bigint") return "int";
  if (value instanceof PythonFloat) return "float";
  if (typeof value === "string") return "str";
  return Array.isArray(value) ? "list" : "dict";
}

function asNumber(value: unknown): number | null {
  if (typeof value === "number") return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof PythonFloat) return value.value;
  return null;
}

/** Python `==` on JSON-like values: 1 == 1.0 == True, dicts by keys (any order), lists in order. */
export function pythonEquals(left: unknown, right: unknown): boolean {
  const leftNumber = asNumber(left);
  const rightNumber = asNumber(right);
  if (leftNumber !== null || rightNumber !== null) return leftNumber !== null && leftNumber === rightNumber;
  if (left === null || left === undefined || right === null || right === undefined) return (left ?? null) === (right ?? null);
  if (typeof left !== "object" || typeof right !== "object") return left === right;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((item, index) => pythonEquals(item, right[index]));
  }
  const leftEntries = left instanceof Map ? [...left.entries()] : Object.entries(left);
  const rightMap = right instanceof Map ? right : new Map(Object.entries(right));
  if (leftEntries.length !== rightMap.size) return false;
  return leftEntries.every(([key, value]) => rightMap.has(key) && pythonEquals(value, rightMap.get(key)));
}

/** The characters Python's `str.strip()` removes (`str.isspace`). */
const EDGE_WHITESPACE =
  /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/gu;
const DECIMAL_DIGIT = /^\p{Nd}$/u;

/**
 * The value of one Unicode decimal digit (Python's `int` accepts any category-Nd digit). Unicode keeps
 * every digit set contiguous in order 0–9, and adjacent sets are complete, so the distance to the start
 * of the run, modulo 10, is the value.
 */
function digitValue(character: string): number {
  let codePoint = character.codePointAt(0) as number;
  let offset = 0;
  while (codePoint > 0 && DECIMAL_DIGIT.test(String.fromCodePoint(codePoint - 1))) {
    codePoint--;
    offset++;
  }
  return offset % 10;
}

function invalidLiteral(text: string): PythonError {
  return new PythonError("ValueError", `invalid literal for int() with base 10: ${pythonRepr(text)}`);
}

/** Python `int(x)` of a JSON value: numbers truncate, booleans are 0/1, strings parse in base 10. */
export function pythonInt(value: unknown): number {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") return Math.trunc(value) + 0;
  if (typeof value !== "string") {
    throw new PythonError("TypeError", `int() argument must be a string, a bytes-like object or a real number, not '${pythonTypeName(value)}'`);
  }
  const stripped = value.replace(EDGE_WHITESPACE, "");
  const characters = [...stripped];
  let position = 0;
  let sign = 1;
  if (characters[0] === "+" || characters[0] === "-") {
    sign = characters[0] === "-" ? -1 : 1;
    position = 1;
  }
  let result = 0;
  let digits = 0;
  let previousUnderscore = true;
  for (; position < characters.length; position++) {
    const character = characters[position] as string;
    if (character === "_") {
      // Underscores may only sit between digits, one at a time.
      if (previousUnderscore) throw invalidLiteral(value);
      previousUnderscore = true;
      continue;
    }
    if (!DECIMAL_DIGIT.test(character)) throw invalidLiteral(value);
    result = result * 10 + digitValue(character);
    digits++;
    previousUnderscore = false;
  }
  if (digits === 0 || previousUnderscore) throw invalidLiteral(value);
  return sign * result + 0;
}

/** Iterating a JSON value in Python: a list's items, a string's characters, a dict's keys. */
export function pythonIterate(value: unknown): unknown[] {
  if (typeof value === "string") return Array.from(value);
  if (Array.isArray(value)) return value;
  if (value instanceof Map) return [...value.keys()];
  if (value !== null && typeof value === "object" && !(value instanceof PythonFloat)) return Object.keys(value);
  throw new PythonError("TypeError", `'${pythonTypeName(value)}' object is not iterable`);
}

/** Python truthiness: False, 0, "", None, [] and {} are false. */
export function pythonTruthy(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value !== 0;
  if (typeof value === "string") return value !== "";
  return Array.isArray(value) ? value.length > 0 : Object.keys(value).length > 0;
}

/** Python `repr` of a string (single quotes unless the text holds one and no double quote). */
export function pythonRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const body = text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t");
  return `${quote}${quote === "'" ? body.replace(/'/g, "\\'") : body}${quote}`;
}

/**
 * A key under which values that Python's dict/Counter treat as the same key coincide (1, 1.0 and True
 * are one key; "1" is another). Lists and dicts are unhashable.
 */
export function pythonHashKey(value: unknown): string {
  if (typeof value === "number" || typeof value === "boolean") return `number:${Number(value)}`;
  if (typeof value === "string") return `string:${value}`;
  if (value === null || value === undefined) return "None";
  throw new PythonError("TypeError", `unhashable type: '${pythonTypeName(value)}'`);
}

/** Python `repr(x)` of a JSON-like value: `None`, `True`, `2.0`, `'text'`, `['a', 1]`, `{'k': None}`. */
export function pythonReprValue(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return Number.isInteger(value) ? String(value + 0) : pythonFloatRepr(value);
  if (typeof value === "bigint") return value.toString();
  if (value instanceof PythonFloat) return pythonFloatRepr(value.value);
  if (typeof value === "string") return pythonRepr(value);
  if (Array.isArray(value)) return `[${value.map(pythonReprValue).join(", ")}]`;
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value as Record<string, unknown>);
  return `{${entries.map(([key, item]) => `${pythonRepr(key)}: ${pythonReprValue(item)}`).join(", ")}}`;
}

/** Python `str(x)` (what an f-string prints): a str as it is, anything else as its repr. */
export function pythonStr(value: unknown): string {
  return typeof value === "string" ? value : pythonReprValue(value);
}

/** `seq.count(x)` for a list (equal elements) or a str (non-overlapping substrings). */
export function pythonCount(sequence: unknown, item: unknown): number {
  if (typeof sequence === "string") {
    if (typeof item !== "string") throw new PythonError("TypeError", `must be str, not ${pythonTypeName(item)}`);
    if (item === "") return sequence.length + 1;
    return sequence.split(item).length - 1;
  }
  if (Array.isArray(sequence)) return sequence.filter((element) => pythonEquals(element, item)).length;
  throw new PythonError("TypeError", `'${pythonTypeName(sequence)}' object is not iterable`);
}

/** `key in dict`: unhashable keys raise, keys of other types are simply absent. */
export function pythonHasKey(table: unknown, key: unknown): boolean {
  if (Array.isArray(key)) throw new PythonError("TypeError", "unhashable type: 'list'");
  if (key !== null && typeof key === "object" && !(key instanceof PythonFloat)) throw new PythonError("TypeError", "unhashable type: 'dict'");
  if (typeof key !== "string") return false;
  return table instanceof Map ? table.has(key) : Object.hasOwn(table as object, key);
}

/** `value.lower()` with Python's AttributeError for non-strings. */
export function pythonLower(value: unknown): string {
  if (typeof value !== "string") throw new PythonError("AttributeError", `'${pythonTypeName(value)}' object has no attribute 'lower'`);
  return value.toLowerCase();
}

/** Python's `str.isspace` characters, the set `str.strip()` removes without an argument. */
const pythonWhitespace = new Set(
  "\t\n\u000b\u000c\r\u001c\u001d\u001e\u001f \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000",
);

/** Python `str.strip/lstrip/rstrip(chars)`; `chars` undefined or null strips Python whitespace. */
export function pythonStrip(text: string, side: "both" | "left" | "right", chars?: string | null): string {
  const remove = chars === undefined || chars === null ? pythonWhitespace : new Set(chars);
  let start = 0;
  let end = text.length;
  if (side !== "right") while (start < end && remove.has(text[start])) start++;
  if (side !== "left") while (end > start && remove.has(text[end - 1])) end--;
  return text.slice(start, end);
}
