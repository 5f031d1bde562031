import { z } from "zod";
import type { ArgumentValidator, JsonSchema, ToolKind, ToolResult, ToolSpec } from "../../core/index.ts";

/**
 * A tool as an environment defines it: a zod schema for its arguments and the code that runs it on the
 * episode's state. The JSON Schema the model sees is derived from the zod schema, so the two cannot drift.
 */
export interface ToolDefinition<State, Input = unknown> {
  name: string;
  description: string;
  kind: ToolKind;
  input: z.ZodType<Input>;
  execute(state: State, input: Input): ToolResult;
}

/** Keeps the input type of each tool while collecting them in one list. */
export function defineTool<State, Input>(tool: ToolDefinition<State, Input>): ToolDefinition<State, Input> {
  return tool;
}

/** The JSON Schema of a tool's arguments, as OpenAI-style function calling expects it (no `$schema`). */
export function argumentsSchema(input: z.ZodType): JsonSchema {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(input, { io: "input" }) as Record<string, unknown>;
  return withoutSafeIntegerBounds(schema) as JsonSchema;
}

/**
 * zod writes ±2^53−1 bounds on every `.int()`: they say nothing to a model and lengthen every prompt.
 * The description goes last in each property, as hand-written schemas have it, because the model reads
 * the schema as rendered text and key order changes the prompt.
 */
function withoutSafeIntegerBounds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSafeIntegerBounds);
  if (!value || typeof value !== "object") return value;
  const entries = Object.entries(value).filter(
    ([key, bound]) => !((key === "maximum" && bound === Number.MAX_SAFE_INTEGER) || (key === "minimum" && bound === Number.MIN_SAFE_INTEGER)),
  );
  const ordered = [...entries.filter(([key]) => key !== "description"), ...entries.filter(([key]) => key === "description")];
  return Object.fromEntries(ordered.map(([key, inner]) => [key, withoutSafeIntegerBounds(inner)]));
}

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === "number") return `the number ${value}`;
  return `a ${typeof value}`;
}

/** One readable sentence for the model from zod's issues: where, what was expected, what came. */
export function describeIssues(toolName: string, issues: readonly z.core.$ZodIssue[], input: unknown): string {
  const parts = issues.slice(0, 3).map((issue) => {
    const where = issue.path.length > 0 ? `argument '${issue.path.join(".")}'` : "arguments";
    if (issue.code === "unrecognized_keys") return `unexpected argument${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((key) => `'${key}'`).join(", ")}`;
    let value: unknown = input;
    for (const key of issue.path) value = value && typeof value === "object" ? (value as Record<PropertyKey, unknown>)[key as PropertyKey] : undefined;
    if (issue.code === "invalid_type" && value === undefined) return `missing required ${where}`;
    return `${where}: ${issue.message.replace(/^Invalid input: /, "").replace(/, received \w+$/, "")}, got ${describeValue(value)}`;
  });
  return `${toolName}: ${parts.join("; ")}`;
}

/** A zod schema as the episode driver's check: the parsed (typed, defaulted) arguments, or one readable sentence. */
export function zodValidator(toolName: string, input: z.ZodType): ArgumentValidator {
  return (args) => {
    const parsed = input.safeParse(args ?? {});
    return parsed.success ? { ok: true, value: parsed.data } : { ok: false, message: describeIssues(toolName, parsed.error.issues, args) };
  };
}

/**
 * The tools of an environment: their specs for the model, one argument check per tool for the episode
 * driver (an episode's `validators`), and the way to run a call the driver accepted.
 */
export interface Toolbox<State> {
  readonly specs: ToolSpec[];
  readonly names: readonly string[];
  readonly validators: ReadonlyMap<string, ArgumentValidator>;
  kind(name: string): ToolKind | undefined;
  /** Runs a call the driver accepted: `args` is what the tool's validator returned, so the tool gets its typed input. */
  run(state: State, name: string, args: unknown): ToolResult;
}

// Each tool keeps its own input type; the list only needs them to share the state.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function createToolbox<State>(tools: ReadonlyArray<ToolDefinition<State, any>>): Toolbox<State> {
  const byName = new Map(tools.map((tool) => [tool.name, tool as unknown as ToolDefinition<State, unknown>]));
  const specs: ToolSpec[] = tools.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: argumentsSchema(tool.input) },
  }));
  const validators = new Map(tools.map((tool) => [tool.name, zodValidator(tool.name, tool.input)]));
  return {
    specs,
    names: tools.map((tool) => tool.name),
    validators,
    kind: (name) => byName.get(name)?.kind,
    run(state, name, args) {
      const tool = byName.get(name);
      // The driver looks every name up before a call gets here; reaching this is a harness bug, not a model's mistake.
      if (!tool) throw new Error(`toolbox: no tool '${name}' (calls reach run() only after the episode driver's lookup)`);
      return tool.execute(state, args);
    },
  };
}
