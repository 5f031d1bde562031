/**
 * JSON exactly as Python sees it. Parsing keeps what `JSON.parse` loses and `json.loads` keeps (integral
 * float lexemes such as `100.0`, integers beyond 2^53, the file order of integer-like object keys);
 * `pythonJsonDumps` writes values as `json.dumps` does, with its options.
 */
import { PythonFloat, pythonJsonFloat } from "./float.ts";

export type PythonJsonValue =
  null | boolean | number | bigint | string | PythonFloat | PythonJsonValue[] | Map<string, PythonJsonValue> | { [key: string]: PythonJsonValue };

export class PythonJsonSyntaxError extends Error {}

const integerKey = /^(0|[1-9][0-9]*)$/;

export interface ParseOptions {
  /** Numbers as plain JavaScript numbers (callers that know their float fields by name), no PythonFloat or bigint. */
  plainNumbers?: boolean;
}

/**
 * Parses JSON text as `json.loads` sees it: objects with integer-like keys become Maps so that their
 * file order survives; integral float lexemes stay `PythonFloat`s and big integers `bigint`s.
 */
export function parsePythonJson(text: string, options: ParseOptions = {}): PythonJsonValue {
  const parser = new Parser(text, options.plainNumbers ?? false);
  parser.skipWhitespace();
  const value = parser.value();
  parser.skipWhitespace();
  if (parser.position !== text.length) parser.fail("unexpected text after the JSON value");
  return value;
}

class Parser {
  position = 0;
  constructor(
    private readonly text: string,
    private readonly plainNumbers: boolean,
  ) {}

  fail(message: string): never {
    throw new PythonJsonSyntaxError(`${message} at character ${this.position}`);
  }

  skipWhitespace(): void {
    const text = this.text;
    let position = this.position;
    for (;;) {
      const code = text.charCodeAt(position);
      if (code === 32 || code === 10 || code === 13 || code === 9) position++;
      else break;
    }
    this.position = position;
  }

  value(): PythonJsonValue {
    const code = this.text.charCodeAt(this.position);
    if (code === 34) return this.string();
    if (code === 123) return this.object();
    if (code === 91) return this.array();
    if (this.text.startsWith("-Infinity", this.position)) return this.literal(9, new PythonFloat(Number.NEGATIVE_INFINITY));
    if (code === 45 || (code >= 48 && code <= 57)) return this.number();
    if (this.text.startsWith("true", this.position)) return this.literal(4, true);
    if (this.text.startsWith("false", this.position)) return this.literal(5, false);
    if (this.text.startsWith("null", this.position)) return this.literal(4, null);
    if (this.text.startsWith("NaN", this.position)) return this.literal(3, new PythonFloat(Number.NaN));
    if (this.text.startsWith("Infinity", this.position)) return this.literal(8, new PythonFloat(Number.POSITIVE_INFINITY));
    return this.fail("expected a JSON value");
  }

  private literal<T>(length: number, value: T): T {
    this.position += length;
    return value;
  }

  string(): string {
    const text = this.text;
    const start = this.position;
    let position = start + 1;
    let escaped = false;
    for (;;) {
      const quote = text.indexOf('"', position);
      if (quote < 0) this.fail("unterminated string");
      const backslash = text.indexOf("\\", position);
      if (backslash >= 0 && backslash < quote) {
        escaped = true;
        position = backslash + 2;
        continue;
      }
      this.position = quote + 1;
      if (!escaped) {
        const raw = text.slice(start + 1, quote);
        // control characters are invalid inside JSON strings; JSON.parse reports them
        return /[\u0000-\u001f]/.test(raw) ? (JSON.parse(text.slice(start, quote + 1)) as string) : raw;
      }
      try {
        return JSON.parse(text.slice(start, quote + 1)) as string;
      } catch (error) {
        return this.fail(`invalid string (${(error as Error).message})`);
      }
    }
  }

  private number(): number | bigint | PythonFloat {
    const match = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
    match.lastIndex = this.position;
    const found = match.exec(this.text);
    if (!found) return this.fail("invalid number");
    this.position += found[0].length;
    const lexeme = found[0];
    const value = Number(lexeme);
    if (this.plainNumbers) return value;
    if (found[2] === undefined && found[3] === undefined) {
      if (Number.isSafeInteger(value)) return Object.is(value, -0) ? 0 : value;
      return BigInt(lexeme);
    }
    return Number.isInteger(value) || !Number.isFinite(value) ? new PythonFloat(value) : value;
  }

  private array(): PythonJsonValue[] {
    this.position++;
    const items: PythonJsonValue[] = [];
    this.skipWhitespace();
    if (this.text.charCodeAt(this.position) === 93) {
      this.position++;
      return items;
    }
    for (;;) {
      this.skipWhitespace();
      items.push(this.value());
      this.skipWhitespace();
      const code = this.text.charCodeAt(this.position++);
      if (code === 93) return items;
      if (code !== 44) this.fail("expected ',' or ']'");
    }
  }

  private object(): PythonJsonValue {
    this.position++;
    const entries: [string, PythonJsonValue][] = [];
    let ordered = false;
    this.skipWhitespace();
    if (this.text.charCodeAt(this.position) === 125) {
      this.position++;
      return {};
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text.charCodeAt(this.position) !== 34) this.fail("expected a string key");
      const key = this.string();
      this.skipWhitespace();
      if (this.text.charCodeAt(this.position++) !== 58) this.fail("expected ':'");
      this.skipWhitespace();
      entries.push([key, this.value()]);
      if (integerKey.test(key) || key === "__proto__") ordered = true;
      this.skipWhitespace();
      const code = this.text.charCodeAt(this.position++);
      if (code === 125) break;
      if (code !== 44) this.fail("expected ',' or '}'");
    }
    if (ordered) {
      // Python dicts keep the first position of a key and the last value
      const map = new Map<string, PythonJsonValue>();
      for (const [key, value] of entries) map.set(key, value);
      return map;
    }
    const object: { [key: string]: PythonJsonValue } = {};
    for (const [key, value] of entries) object[key] = value;
    return object;
  }
}

export interface PythonDumpsOptions {
  /**
   * `ensure_ascii`. Default false, unlike `json.dumps`: most callers reproduce transformers' `tojson` and
   * the SFT files, which write UTF-8; tau2's tool outputs pass true as their `json.dumps` calls leave it.
   */
  ensureAscii?: boolean;
  indent?: number | null;
  separators?: [string, string] | null;
  sortKeys?: boolean;
  /** Object keys whose integral numbers are Python floats (model fields declared `float`, e.g. `price`). */
  floatKeys?: ReadonlySet<string>;
}

interface DumpSettings {
  ensureAscii: boolean;
  indent: number | null;
  itemSeparator: string;
  keySeparator: string;
  sortKeys: boolean;
  floatKeys: ReadonlySet<string> | null;
}

/** Python's `json.dumps(value, ...)` (ensure_ascii aside, see above; default separators `", "`/`": "`, or `","`/`": "` with an indent). */
export function pythonJsonDumps(value: unknown, options: PythonDumpsOptions = {}): string {
  const indent = options.indent ?? null;
  const [itemSeparator, keySeparator] = options.separators ?? (indent === null ? [", ", ": "] : [",", ": "]);
  const settings: DumpSettings = {
    ensureAscii: options.ensureAscii ?? false,
    indent,
    itemSeparator,
    keySeparator,
    sortKeys: options.sortKeys ?? false,
    floatKeys: options.floatKeys ?? null,
  };
  return dumpValue(value, settings, 0, false);
}

function dumpString(text: string, ensureAscii: boolean): string {
  // JSON.stringify writes \" \\ \b \f \n \r \t and \u00xx for other controls, as Python does; with
  // ensure_ascii Python also escapes DEL and everything above it, one UTF-16 unit at a time.
  const quoted = JSON.stringify(text);
  if (!ensureAscii) return quoted;
  return quoted.replace(/[\u007f-\uffff]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function dumpNumber(value: number, asFloat: boolean): string {
  if (asFloat || !Number.isInteger(value)) return pythonJsonFloat(value);
  return Number.isSafeInteger(value) ? String(value + 0) : BigInt(value).toString();
}

function dumpValue(value: unknown, settings: DumpSettings, depth: number, asFloat: boolean): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return dumpString(value, settings.ensureAscii);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return dumpNumber(value, asFloat);
  if (value instanceof PythonFloat) return pythonJsonFloat(value.value);
  const newline = settings.indent === null ? "" : `\n${" ".repeat(settings.indent * (depth + 1))}`;
  const closing = settings.indent === null ? "" : `\n${" ".repeat(settings.indent * depth)}`;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const items = value.map((item) => dumpValue(item, settings, depth + 1, asFloat));
    return `[${newline}${items.join(settings.itemSeparator + newline)}${closing}]`;
  }
  let entries: [string, unknown][] = value instanceof Map ? [...(value as Map<string, unknown>).entries()] : Object.entries(value as object);
  if (entries.length === 0) return "{}";
  if (settings.sortKeys) entries = entries.sort(([left], [right]) => comparePythonStrings(left, right));
  const items = entries.map(
    ([key, item]) =>
      `${dumpString(key, settings.ensureAscii)}${settings.keySeparator}${dumpValue(item, settings, depth + 1, settings.floatKeys?.has(key) ?? false)}`,
  );
  return `{${newline}${items.join(settings.itemSeparator + newline)}${closing}}`;
}

/** Python's str ordering (code points), which differs from UTF-16 order only outside the BMP. */
export function comparePythonStrings(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/** A parsed JSON object: a plain object, or a Map where the key order must survive (integer-like keys). */
export type Dict = Record<string, unknown> | Map<string, unknown>;

export function dictGet(dict: unknown, key: string): unknown {
  return dict instanceof Map ? dict.get(key) : (dict as Record<string, unknown>)[key];
}

export function dictHas(dict: unknown, key: string): boolean {
  return dict instanceof Map ? dict.has(key) : Object.hasOwn(dict as object, key);
}

export function dictEntries(dict: unknown): [string, unknown][] {
  if (dict === null || dict === undefined) return [];
  return dict instanceof Map ? [...dict.entries()] : Object.entries(dict as Record<string, unknown>);
}

export function dictValues(dict: unknown): unknown[] {
  return dictEntries(dict).map(([, value]) => value);
}

export function dictKeys(dict: unknown): string[] {
  return dictEntries(dict).map(([key]) => key);
}

/**
 * A `parsePythonJson` value as plain JSON for records and viewers: floats as numbers, big ints as the nearest
 * number, Maps as objects, and the non-finite floats as their `json.dumps` words ("Infinity", "NaN") where
 * JSON.stringify would write null. Keep the exact value beside it (`pythonJsonDumps`) where it matters.
 */
export function plainPythonJson(value: unknown): unknown {
  if (value instanceof PythonFloat) return plainPythonJson(value.value);
  if (typeof value === "number") return Number.isFinite(value) ? value : pythonJsonFloat(value);
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Map) return plainPythonJson(Object.fromEntries(value));
  if (Array.isArray(value)) return value.map(plainPythonJson);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plainPythonJson(item)]));
  return value ?? null;
}
