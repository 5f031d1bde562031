import { PythonError, PythonFloat, pythonReprValue, pythonTypeName } from "../../python-semantics/index.ts";

/**
 * The checks pydantic (lax mode) makes when a tau2 tool builds a model from the arguments it was given
 * (`Task(title=...)`, `APNSettings(**settings)`), with pydantic's own error texts and coercions. tau2 does
 * not validate tool arguments on the way in; only such model constructions do, so only they are ported.
 */
export type FieldKind = "str" | "optional_str" | "bool" | "optional_int" | { enum: readonly string[] };

/** The pydantic release of the reference (its error texts link to the release's docs). */
const PYDANTIC_DOCS = "https://errors.pydantic.dev/2.13/v";

type Checked = { value: unknown } | { type: string; message: string };

const TRUE_WORDS = new Set(["1", "on", "t", "true", "y", "yes"]);
const FALSE_WORDS = new Set(["0", "off", "f", "false", "n", "no"]);

function laxBool(value: unknown): Checked {
  if (typeof value === "boolean") return { value };
  const number = value instanceof PythonFloat ? value.value : typeof value === "number" || typeof value === "bigint" ? Number(value) : null;
  if (number !== null && (number === 0 || number === 1)) return { value: number === 1 };
  if (typeof value === "string") {
    const word = value.toLowerCase();
    if (TRUE_WORDS.has(word)) return { value: true };
    if (FALSE_WORDS.has(word)) return { value: false };
    return { type: "bool_parsing", message: "Input should be a valid boolean, unable to interpret input" };
  }
  if (typeof value === "number" && !Number.isInteger(value)) return { type: "bool_type", message: "Input should be a valid boolean" };
  if (number !== null && !(value instanceof PythonFloat))
    return { type: "bool_parsing", message: "Input should be a valid boolean, unable to interpret input" };
  return { type: "bool_type", message: "Input should be a valid boolean" };
}

/** pydantic's lax int: ints, bools, integral floats, and digit strings (`" 8_080 "`, `"8080.0"`). */
function laxInt(value: unknown): Checked {
  if (typeof value === "boolean") return { value: value ? 1 : 0 };
  if (typeof value === "bigint") return { value };
  const float = value instanceof PythonFloat ? value.value : typeof value === "number" && !Number.isInteger(value) ? value : null;
  if (float !== null) {
    if (!Number.isFinite(float)) return { type: "finite_number", message: "Input should be a finite number" };
    if (!Number.isInteger(float)) return { type: "int_from_float", message: "Input should be a valid integer, got a number with a fractional part" };
    return { value: Number.isSafeInteger(float) ? float : BigInt(float) };
  }
  if (typeof value === "number") return { value };
  if (typeof value === "string") {
    const match = /^([+-]?\d+(?:_\d+)*)(?:\.0*)?$/.exec(value.trim());
    if (!match) return { type: "int_parsing", message: "Input should be a valid integer, unable to parse string as an integer" };
    const integer = BigInt((match[1] as string).replaceAll("_", ""));
    return { value: integer >= BigInt(Number.MIN_SAFE_INTEGER) && integer <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(integer) : integer };
  }
  return { type: "int_type", message: "Input should be a valid integer" };
}

function check(kind: FieldKind, value: unknown): Checked {
  if ((kind === "optional_str" || kind === "optional_int") && (value === null || value === undefined)) return { value: null };
  if (kind === "str" || kind === "optional_str")
    return typeof value === "string" ? { value } : { type: "string_type", message: "Input should be a valid string" };
  if (kind === "bool") return laxBool(value);
  if (kind === "optional_int") return laxInt(value);
  if (typeof value === "string" && kind.enum.includes(value)) return { value };
  const names = kind.enum.map((item) => `'${item}'`);
  const listed = names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : (names[0] ?? "");
  return { type: "enum", message: `Input should be ${listed}` };
}

function errorText(name: string, type: string, message: string, value: unknown): string {
  return `${name}\n  ${message} [type=${type}, input_value=${pythonReprValue(value)}, input_type=${pythonTypeName(value)}]\n    For further information visit ${PYDANTIC_DOCS}/${type}`;
}

function raise(model: string, errors: string[]): never {
  const count = `${errors.length} validation error${errors.length === 1 ? "" : "s"} for ${model}`;
  throw new PythonError("ValidationError", [count, ...errors].join("\n"));
}

/** Raises pydantic's ValidationError text when a field's value does not fit its type. */
export function validateModel(model: string, fields: ReadonlyArray<readonly [name: string, kind: FieldKind, value: unknown]>): void {
  const errors = fields.flatMap(([name, kind, value]) => {
    const checked = check(kind, value);
    return "type" in checked ? [errorText(name, checked.type, checked.message, value)] : [];
  });
  if (errors.length > 0) raise(model, errors);
}

/**
 * `Model(**data)` for a model with defaults and `extra="forbid"` (tau2's `BaseModelNoExtra`): the fields in
 * declaration order, each given value coerced as lax mode does, the defaults filled in; errors listed in
 * declaration order, then the extra keys in the order given.
 */
export function buildModel(
  model: string,
  fields: ReadonlyArray<readonly [name: string, kind: FieldKind, defaultValue: unknown]>,
  data: Record<string, unknown>,
): Record<string, unknown> {
  const built: Record<string, unknown> = {};
  const errors: string[] = [];
  for (const [name, kind, defaultValue] of fields) {
    if (!Object.hasOwn(data, name)) {
      built[name] = defaultValue;
      continue;
    }
    const checked = check(kind, data[name]);
    if ("type" in checked) errors.push(errorText(name, checked.type, checked.message, data[name]));
    else built[name] = checked.value;
  }
  const known = new Set(fields.map(([name]) => name));
  for (const [name, value] of Object.entries(data))
    if (!known.has(name)) errors.push(errorText(name, "extra_forbidden", "Extra inputs are not permitted", value));
  if (errors.length > 0) raise(model, errors);
  return built;
}
