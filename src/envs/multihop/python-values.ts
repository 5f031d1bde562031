/**
 * Python's built-in semantics on JSON values, as the official MuSiQue scorer applies them to whatever a
 * prediction file holds: `int(x)`, iteration (`set(map(int, x))`), `==`, truthiness, `str(x)` and the
 * hash equality of dict keys. A Python exception becomes a `PythonFailure` carrying the exception line
 * the official script would end with, so callers can reject exactly what it rejects and say why.
 */
export class PythonFailure extends Error {
  constructor(
    /** The exception as Python prints its last line, e.g. `KeyError: 'id'`. */
    readonly official: string,
  ) {
    super(official);
  }
}

/** Python's type name of a parsed JSON value (a JSON number with a fraction is a float). */
export function pythonTypeName(value: unknown): string {
  if (value === null || value === undefined) return "NoneType";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (typeof value === "string") return "str";
  return Array.isArray(value) ? "list" : "dict";
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

function invalidLiteral(text: string): PythonFailure {
  return new PythonFailure(`ValueError: invalid literal for int() with base 10: ${pythonRepr(text)}`);
}

/** Python `int(x)` of a JSON value: numbers truncate, booleans are 0/1, strings parse in base 10. */
export function pythonInt(value: unknown): number {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") return Math.trunc(value) + 0;
  if (typeof value !== "string") {
    throw new PythonFailure(`TypeError: int() argument must be a string, a bytes-like object or a real number, not '${pythonTypeName(value)}'`);
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
  if (Array.isArray(value)) return value;
  if (typeof value === "string") return [...value];
  if (typeof value === "object" && value !== null) return Object.keys(value);
  throw new PythonFailure(`TypeError: '${pythonTypeName(value)}' object is not iterable`);
}

/** Python `==` between JSON values: bool and number compare numerically (True == 1 == 1.0). */
export function pythonEquals(left: unknown, right: unknown): boolean {
  const isNumeric = (value: unknown) => typeof value === "number" || typeof value === "boolean";
  if (isNumeric(left) && isNumeric(right)) return Number(left) === Number(right);
  if (left === null || right === null || typeof left !== "object" || typeof right !== "object") return left === right;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((item, position) => pythonEquals(item, right[position]));
  }
  const leftKeys = Object.keys(left);
  const rightRecord = right as Record<string, unknown>;
  if (leftKeys.length !== Object.keys(rightRecord).length) return false;
  return leftKeys.every(
    (key) => Object.prototype.hasOwnProperty.call(rightRecord, key) && pythonEquals((left as Record<string, unknown>)[key], rightRecord[key]),
  );
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
  throw new PythonFailure(`TypeError: unhashable type: '${pythonTypeName(value)}'`);
}

/** Python `str(x)` of a scalar JSON value (the official group metrics key their store by `str(id)`). */
export function pythonStr(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "True" : "False";
  if (value === null || value === undefined) return "None";
  if (typeof value === "number") return String(value);
  // Containers never collide with scalars' str() in practice; JSON text keeps distinct values distinct.
  return JSON.stringify(value);
}
