/**
 * Python value semantics tau2's outputs depend on: `json.dumps` (separators `", "`/`": "`, `ensure_ascii`,
 * `sort_keys`), float `repr`, `round(x, 2)`, `==` across int/float/bool, and `str.count`.
 *
 * Python distinguishes int from float; JavaScript numbers do not. A number is printed as a Python float
 * when it is not an integer or when the caller says the position holds a float (`floatKeys`: the model
 * fields declared `float`, e.g. `price`), so `100` in a float field prints `100.0`, as pydantic's dump does.
 */

/** A Python float that happens to be integral (`5.0`), kept distinct from the int `5` outside model fields. */
export class PyFloat {
  constructor(readonly value: number) {}
}

export function floatRepr(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "Infinity";
  if (value === -Infinity) return "-Infinity";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  // JavaScript gives the same shortest round-trip digits as Python's repr; only the layout differs.
  const exponential = value.toExponential();
  const [mantissa, exponentText] = exponential.split("e") as [string, string];
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    const sign = exponent < 0 ? "-" : "+";
    const magnitude = String(Math.abs(exponent)).padStart(2, "0");
    return `${mantissa}e${sign}${magnitude}`;
  }
  // Within Python's fixed-notation range JavaScript never switches to exponent notation either.
  const plain = value.toString();
  return plain.includes(".") ? plain : `${plain}.0`;
}

function escapeString(text: string): string {
  // JSON.stringify already writes \" \\ \b \f \n \r \t and \u00xx for other controls, like Python.
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export interface DumpOptions {
  sortKeys?: boolean;
  /** Object keys whose numeric values are Python floats (model fields declared `float`). */
  floatKeys?: ReadonlySet<string>;
}

/** Python's `json.dumps(value, default=str)` with its default separators and `ensure_ascii=True`. */
export function pyDumps(value: unknown, options: DumpOptions = {}): string {
  return dumpValue(value, options, false);
}

function dumpNumber(value: number, asFloat: boolean): string {
  if (asFloat || !Number.isInteger(value)) return floatRepr(value);
  return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
}

function dumpValue(value: unknown, options: DumpOptions, asFloat: boolean): string {
  if (value === null || value === undefined) return "null";
  if (value === true) return "true";
  if (value === false) return "false";
  if (typeof value === "number") return dumpNumber(value, asFloat);
  if (typeof value === "string") return escapeString(value);
  if (value instanceof PyFloat) return floatRepr(value.value);
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[${value.map((item) => dumpValue(item, options, asFloat)).join(", ")}]`;
  }
  const entries = value instanceof Map ? [...(value as Map<string, unknown>).entries()] : Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return "{}";
  if (options.sortKeys) entries.sort(([a], [b]) => comparePython(a, b));
  const parts = entries.map(([key, item]) => `${escapeString(key)}: ${dumpValue(item, options, options.floatKeys?.has(key) ?? false)}`);
  return `{${parts.join(", ")}}`;
}

/** Python's str ordering (code points), which differs from UTF-16 order only outside the BMP. */
export function comparePython(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Python's `round(x, 2)`: the exactly nearest two-decimal value of the binary double, ties to even.
 * `toFixed` also works from the exact binary value but breaks ties upward, so exact ties are settled here.
 */
export function pyRound2(value: number): number {
  if (!Number.isFinite(value)) return value;
  const rounded = Number(value.toFixed(2));
  if (isExactHalfCent(value)) {
    const lower = Math.floor(value * 100) / 100;
    const upper = Math.ceil(value * 100) / 100;
    const lowerCents = Math.round(lower * 100);
    return lowerCents % 2 === 0 ? lower : upper;
  }
  return Object.is(rounded, -0) ? -0 : rounded;
}

/** True when value·100 is exactly k + 1/2 (value·200 is an odd integer), computed without rounding. */
function isExactHalfCent(value: number): boolean {
  const buffer = new DataView(new ArrayBuffer(8));
  buffer.setFloat64(0, Math.abs(value));
  const bits = buffer.getBigUint64(0);
  const exponentBits = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & 0xfffffffffffffn;
  if (exponentBits !== 0) mantissa |= 1n << 52n;
  const exponent = (exponentBits === 0 ? 1 : exponentBits) - 1075;
  // value = mantissa · 2^exponent; value·200 = mantissa·200 · 2^exponent.
  if (exponent >= 0) return false;
  const scaled = mantissa * 200n;
  const divisor = 1n << BigInt(-exponent);
  if (scaled % divisor !== 0n) return false;
  return (scaled / divisor) % 2n === 1n;
}

/** Python `==` on JSON-like values: 1 == 1.0 == True, dicts by keys, lists in order. */
export function pyEquals(left: unknown, right: unknown): boolean {
  const leftNumber = asPyNumber(left);
  const rightNumber = asPyNumber(right);
  if (leftNumber !== null || rightNumber !== null) return leftNumber !== null && leftNumber === rightNumber;
  if (left === null || left === undefined || right === null || right === undefined) return (left ?? null) === (right ?? null);
  if (typeof left === "string" || typeof right === "string") return left === right;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((item, index) => pyEquals(item, right[index]));
  }
  const leftObject = left as Record<string, unknown>;
  const rightObject = right as Record<string, unknown>;
  const leftKeys = Object.keys(leftObject);
  if (leftKeys.length !== Object.keys(rightObject).length) return false;
  return leftKeys.every((key) => Object.hasOwn(rightObject, key) && pyEquals(leftObject[key], rightObject[key]));
}

function asPyNumber(value: unknown): number | null {
  if (typeof value === "number") return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof PyFloat) return value.value;
  return null;
}

/** Python's type name of a JSON value, for TypeError/AttributeError texts. */
export function pyTypeName(value: unknown): string {
  if (value === null || value === undefined) return "NoneType";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (value instanceof PyFloat) return "float";
  if (typeof value === "string") return "str";
  if (Array.isArray(value)) return "list";
  return "dict";
}

/** `seq.count(x)` for a list (equal elements) or a str (non-overlapping substrings). */
export function pyCount(sequence: unknown, item: unknown): number {
  if (typeof sequence === "string") {
    if (typeof item !== "string") throw new TypeError(`must be str, not ${pyTypeName(item)}`);
    if (item === "") return sequence.length + 1;
    return sequence.split(item).length - 1;
  }
  if (Array.isArray(sequence)) return sequence.filter((element) => pyEquals(element, item)).length;
  throw new TypeError(`'${pyTypeName(sequence)}' object is not iterable`);
}

/** Iterates a Python iterable given as JSON: a list by element, a str by character, a dict by key. */
export function pyIterate(value: unknown): unknown[] {
  if (typeof value === "string") return Array.from(value);
  if (Array.isArray(value)) return value;
  if (value instanceof Map) return [...value.keys()];
  if (value !== null && typeof value === "object" && !(value instanceof PyFloat)) return Object.keys(value);
  throw new PyError("TypeError", `'${pyTypeName(value)}' object is not iterable`);
}

/** A Python exception as tau2 would raise it; its message is what `str(exception)` prints. */
export class PyError extends Error {
  constructor(
    readonly pythonType: string,
    message: string,
  ) {
    super(message);
  }
}

/** `key in dict` in Python: unhashable keys raise, other types simply are not present. */
export function pyHasKey(table: unknown, key: unknown): boolean {
  if (Array.isArray(key)) throw new PyError("TypeError", "unhashable type: 'list'");
  if (key !== null && typeof key === "object" && !(key instanceof PyFloat)) throw new PyError("TypeError", "unhashable type: 'dict'");
  if (typeof key !== "string") return false;
  return table instanceof Map ? table.has(key) : Object.hasOwn(table as object, key);
}

/** `value.lower()` with Python's AttributeError for non-strings. */
export function pyLower(value: unknown): string {
  if (typeof value !== "string") throw new PyError("AttributeError", `'${pyTypeName(value)}' object has no attribute 'lower'`);
  return value.toLowerCase();
}
