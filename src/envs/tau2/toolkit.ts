import { PythonError, PythonFloat, pythonFloatRepr, pythonJsonDumps, pythonTypeName } from "../../python-semantics/index.ts";
import type { CowStore } from "./store.ts";

/** tau2's tool kinds (`ToolType`), reported in each action check as `tool_type`. */
export type ToolType = "read" | "write" | "think" | "generic";

/** The live state one tool call sees: the agent DB and, where the domain has one, the user DB. */
export interface ToolContext {
  agent: CowStore;
  user: CowStore | null;
}

/** One tool or environment function: its Python signature (for argument errors) and its behaviour. */
export interface Tau2Function {
  name: string;
  type: ToolType;
  /** Parameters in declaration order; those in `defaults` are optional. */
  params: readonly string[];
  defaults?: Readonly<Record<string, unknown>>;
  run(context: ToolContext, args: Record<string, unknown>): unknown;
}

/** A toolkit: the tools an LLM may call plus helper functions only tasks call (assertions, setup). */
export interface Toolkit {
  /** Python class name, as it appears in TypeError texts (`RetailTools.get_order_details()`). */
  className: string;
  tools: readonly Tau2Function[];
  functions: readonly Tau2Function[];
  /** The DB this toolkit reads (`agent` or `user`). */
  side: "agent" | "user";
}

export function findTool(toolkit: Toolkit, name: string): Tau2Function | undefined {
  return toolkit.tools.find((tool) => tool.name === name);
}

export function findFunction(toolkit: Toolkit, name: string): Tau2Function | undefined {
  return findTool(toolkit, name) ?? toolkit.functions.find((fn) => fn.name === name);
}

/** Python's keyword binding: an unexpected keyword first, then the missing required ones. */
export function bindArguments(className: string, fn: Tau2Function, args: unknown): Record<string, unknown> {
  const qualified = `${className}.${fn.name}()`;
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    throw new PythonError("TypeError", `${qualified} argument after ** must be a mapping, not ${pythonTypeName(args)}`);
  }
  const given = args as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!fn.params.includes(key)) throw new PythonError("TypeError", `${qualified} got an unexpected keyword argument '${key}'`);
  }
  const missing = fn.params.filter((param) => !Object.hasOwn(given, param) && !(fn.defaults && Object.hasOwn(fn.defaults, param)));
  if (missing.length > 0) {
    const quoted = missing.map((name) => `'${name}'`);
    const list =
      quoted.length === 1 ? quoted[0] : quoted.length === 2 ? `${quoted[0]} and ${quoted[1]}` : `${quoted.slice(0, -1).join(", ")}, and ${quoted.at(-1)}`;
    const noun = missing.length === 1 ? "argument" : "arguments";
    throw new PythonError("TypeError", `${qualified} missing ${missing.length} required positional ${noun}: ${list}`);
  }
  const bound: Record<string, unknown> = {};
  for (const param of fn.params) bound[param] = Object.hasOwn(given, param) ? given[param] : fn.defaults?.[param];
  return bound;
}

/** A pydantic model instance returned by a tool: dumped as-is (`model_dump()`), floats kept as floats. */
export class ModelValue {
  constructor(readonly value: unknown) {}
}

export const model = (value: unknown): ModelValue => new ModelValue(value);

/**
 * tau2's `Environment.to_json_str`: a str passes through; anything else goes through `json.dumps` after
 * models become their dumps and bare numbers/bools become `str(x)` (so `True`, not `true`).
 */
export function toJsonString(value: unknown, floatKeys: ReadonlySet<string>): string {
  if (typeof value === "string") return value;
  return pythonJsonDumps(processValue(value, floatKeys, false), { ensureAscii: true, floatKeys });
}

/** A plain dict's number under a model's float field name came from that field (`get_data_usage`): `str` prints it as a float. */
function processValue(value: unknown, floatKeys: ReadonlySet<string>, asFloat: boolean): unknown {
  if (value instanceof ModelValue) return value.value;
  if (value === null || value === undefined || typeof value === "string") return value ?? null;
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return asFloat ? pythonFloatRepr(value) : pythonJsonDumps(value, { ensureAscii: true });
  if (value instanceof PythonFloat) return pythonFloatRepr(value.value);
  if (Array.isArray(value)) return value.map((item) => processValue(item, floatKeys, false));
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, processValue(item, floatKeys, floatKeys.has(key))]));
}

/** Python's `str(x)` of a tool argument as `json.loads` typed it (`2` stays `2`, `2.0` stays `2.0`). */
export function pythonArgumentText(value: unknown): string {
  if (value instanceof PythonFloat) return pythonFloatRepr(value.value);
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : pythonFloatRepr(value);
  if (typeof value === "boolean") return value ? "True" : "False";
  if (value === null || value === undefined) return "None";
  return String(value);
}

/**
 * A numeric argument as Python's arithmetic sees it (bool is an int); anything else raises the TypeError
 * that the comparison `operator` with an int raises in Python.
 */
export function numericArgument(value: unknown, operator: string): { value: number; float: boolean } {
  if (value instanceof PythonFloat) return { value: value.value, float: true };
  if (typeof value === "number") return { value, float: !Number.isInteger(value) };
  if (typeof value === "boolean") return { value: value ? 1 : 0, float: false };
  if (typeof value === "bigint") {
    // Python compares a big int exactly; mixing it with a float converts it, which overflows past ~1.8e308.
    const converted = Number(value);
    if (converted === Infinity) throw new PythonError("OverflowError", "int too large to convert to float");
    return { value: converted, float: false };
  }
  throw new PythonError("TypeError", `'${operator}' not supported between instances of '${pythonTypeName(value)}' and 'int'`);
}

/** Converts a thrown value into the text after `Error: ` (Python's `str(exception)`). */
export function exceptionText(error: unknown): string {
  if (error instanceof PythonError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}
