/**
 * JSON exactly as Python sees it. `parsePythonJson` keeps what `JSON.parse` loses and Python's
 * `json.loads` keeps: integral float lexemes (`100.0` stays a float), integers beyond 2^53, and the file
 * order of integer-like object keys. `pythonJsonDumps` writes values as Python's `json.dumps` does
 * (separators `", "`/`": "`, `ensure_ascii`, float `repr`), which is what transformers' `tojson` filter
 * and the SFT normalisation of tool-call arguments produce.
 */

/** A JSON number that Python reads as a float although its value is integral (e.g. `100.0`, `1e3`). */
export class PythonFloat {
  constructor(readonly value: number) {}
}

export type PythonJsonValue =
  null | boolean | number | bigint | string | PythonFloat | PythonJsonValue[] | Map<string, PythonJsonValue> | { [key: string]: PythonJsonValue };

export class PythonJsonSyntaxError extends Error {}

const integerKey = /^(0|[1-9][0-9]*)$/;

/** Parses JSON text; objects with integer-like keys become Maps so that their order survives. */
export function parsePythonJson(text: string): PythonJsonValue {
  const parser = new Parser(text);
  parser.skipWhitespace();
  const value = parser.value();
  parser.skipWhitespace();
  if (parser.position !== text.length) parser.fail("unexpected text after the JSON value");
  return value;
}

class Parser {
  position = 0;
  constructor(private readonly text: string) {}

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
    if (code === 45 || (code >= 48 && code <= 57)) return this.number();
    if (this.text.startsWith("true", this.position)) return this.literal(4, true);
    if (this.text.startsWith("false", this.position)) return this.literal(5, false);
    if (this.text.startsWith("null", this.position)) return this.literal(4, null);
    if (this.text.startsWith("NaN", this.position)) return this.literal(3, new PythonFloat(Number.NaN));
    if (this.text.startsWith("Infinity", this.position)) return this.literal(8, new PythonFloat(Number.POSITIVE_INFINITY));
    if (this.text.startsWith("-Infinity", this.position)) return this.literal(9, new PythonFloat(Number.NEGATIVE_INFINITY));
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

/** Python `repr(float)`: shortest round-trip digits, `.0` on integral values, exponent below 1e-4 or from 1e16. */
export function formatPythonFloat(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "Infinity";
  if (value === Number.NEGATIVE_INFINITY) return "-Infinity";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const sign = value < 0 ? "-" : "";
  const [mantissa, exponentText] = Math.abs(value).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const exponent = Number(exponentText);
  const pointPosition = exponent + 1; // value = 0.DIGITS × 10^pointPosition
  if (pointPosition <= -4 || pointPosition > 16) {
    const body = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const magnitude = Math.abs(exponent).toString().padStart(2, "0");
    return `${sign}${body}e${exponent < 0 ? "-" : "+"}${magnitude}`;
  }
  if (pointPosition <= 0) return `${sign}0.${"0".repeat(-pointPosition)}${digits}`;
  if (pointPosition >= digits.length) return `${sign}${digits}${"0".repeat(pointPosition - digits.length)}.0`;
  return `${sign}${digits.slice(0, pointPosition)}.${digits.slice(pointPosition)}`;
}

export interface PythonDumpsOptions {
  ensureAscii?: boolean;
  indent?: number | null;
  separators?: [string, string] | null;
  sortKeys?: boolean;
}

/** Python `json.dumps(value, ensure_ascii=False)` by default (transformers' `tojson`). */
export function pythonJsonDumps(value: unknown, options: PythonDumpsOptions = {}): string {
  const indent = options.indent ?? null;
  const [itemSeparator, keySeparator] = options.separators ?? (indent === null ? [", ", ": "] : [",", ": "]);
  const settings = { ensureAscii: options.ensureAscii ?? false, indent, itemSeparator, keySeparator, sortKeys: options.sortKeys ?? false };
  return dumpValue(value, settings, 0);
}

interface DumpSettings {
  ensureAscii: boolean;
  indent: number | null;
  itemSeparator: string;
  keySeparator: string;
  sortKeys: boolean;
}

function dumpString(text: string, ensureAscii: boolean): string {
  const quoted = JSON.stringify(text);
  if (!ensureAscii) return quoted;
  return quoted.replace(/[^\u0000-\u007f]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function dumpValue(value: unknown, settings: DumpSettings, depth: number): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return dumpString(value, settings.ensureAscii);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value).toString() : formatPythonFloat(value);
  if (value instanceof PythonFloat) return formatPythonFloat(value.value);
  const newline = settings.indent === null ? "" : `\n${" ".repeat(settings.indent * (depth + 1))}`;
  const closing = settings.indent === null ? "" : `\n${" ".repeat(settings.indent * depth)}`;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const items = value.map((item) => dumpValue(item, settings, depth + 1));
    return `[${newline}${items.join(settings.itemSeparator + newline)}${closing}]`;
  }
  let entries: [string, unknown][] = value instanceof Map ? [...(value as Map<string, unknown>).entries()] : Object.entries(value as object);
  if (entries.length === 0) return "{}";
  if (settings.sortKeys) entries = entries.sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
  const items = entries.map(([key, item]) => `${dumpString(key, settings.ensureAscii)}${settings.keySeparator}${dumpValue(item, settings, depth + 1)}`);
  return `{${newline}${items.join(settings.itemSeparator + newline)}${closing}}`;
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
