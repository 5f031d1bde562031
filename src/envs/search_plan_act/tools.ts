import { z } from "zod";
import { type ArgumentValidator, type ToolKind, type ToolSpec } from "../../core/index.ts";
import { argumentsSchema } from "../_kit/toolbox.ts";

/** The five tools of search_plan_act and search_plan_ood, as the model sees them. */
export const TOOL_KINDS: Record<string, ToolKind> = { search: "read", read_record: "read", update_record: "write", link_records: "write", finish: "finish" };

export const SEARCH_LIMIT_MAX = 10;

/**
 * The argument schemas, one per tool: the JSON Schema the model sees is derived from them. The episode
 * driver checks calls with `SEARCH_PLAN_VALIDATORS` (shapes derived from the same schemas, a parity test
 * keeping the two in agreement, then ranges and enums), whose messages say how to call the tool.
 */
export const SEARCH_PLAN_INPUTS = {
  search: z.strictObject({
    query: z.string().describe('Words to look for, e.g. a name ("Oriveth Calloway"), a code ("PX-44712") or a field value.'),
    type: z.string().optional().describe('Only return records of this type, e.g. "project".'),
    limit: z.number().int().min(1).max(SEARCH_LIMIT_MAX).optional().describe("Hits per page, 1-10 (default 5)."),
    offset: z.number().int().min(0).optional().describe("Number of hits to skip (default 0), for paging through results."),
  }),
  read_record: z.strictObject({ id: z.string().describe('Record id as it appears in search results or links, e.g. "EMP-0192".') }),
  update_record: z.strictObject({
    id: z.string().describe('Record id, e.g. "PRJ-4471".'),
    field: z.string().describe('Field name as shown by read_record, e.g. "status".'),
    value: z.union([z.string(), z.number()]).describe("The new value."),
  }),
  link_records: z.strictObject({
    source_id: z.string().describe("Id of the record the link starts from."),
    relation: z.string().describe('Relation name, e.g. "assigned_to".'),
    target_id: z.string().describe("Id of the record the link points to."),
  }),
  finish: z.strictObject({
    status: z.enum(["done", "impossible"]).describe('"done" or "impossible".'),
    answer: z.string().optional().describe('The answer, for questions: just the value, e.g. "Marrowfield" or "48200".'),
  }),
} as const;

const DESCRIPTIONS: Record<keyof typeof SEARCH_PLAN_INPUTS, string> = {
  search:
    "Full-text search (BM25) over record names and field values. Records whose name or code equals the query exactly come first. " +
    'Returns {"hits": [{id, type, name, snippet}], "total", "offset", "next_offset"} (next_offset only when more hits exist; pass it as offset to see the next page), ' +
    'or {"hits": [], "note": "no records match"}.',
  read_record:
    'Read one record by id. Returns {id, type, name, fields: {...}, links: [{relation, target_id, target_name}]}, or {"ok": false, "error"} for an unknown id.',
  update_record:
    'Set one field of a record. Returns {"ok": true, "previous", "current"} or {"ok": false, "error"} (unknown id, unknown field, wrong type, value not allowed for an enum field, read-only field). ' +
    "Integer and money fields take numbers; date fields take YYYY-MM-DD; enum fields take one of their allowed values.",
  link_records:
    'Add a link "source -[relation]-> target". Returns {"ok": true} or {"ok": false, "error"} (unknown id, relation not allowed between these record types, link already present). ' +
    "Only the relations listed in the error message for a pair of types can be added; structural links (one per record) cannot be changed.",
  finish:
    'End the episode. status "done" when the goal is reached (put the answer to a question in `answer`, exactly the value as it appears in the record); ' +
    'status "impossible" when the goal cannot be reached (the record or link it refers to does not exist); then change nothing.',
};

export const SEARCH_PLAN_TOOLS: ToolSpec[] = (Object.keys(SEARCH_PLAN_INPUTS) as Array<keyof typeof SEARCH_PLAN_INPUTS>).map((name) => ({
  type: "function",
  function: { name, description: DESCRIPTIONS[name], parameters: argumentsSchema(SEARCH_PLAN_INPUTS[name]) },
}));

/**
 * Checks a tool call's arguments against the schema: an object, required keys present, no extra keys,
 * primitive types right. Returns an error sentence or null.
 */
interface ArgumentRules {
  properties: Record<string, string[]>;
  required: string[];
  usage: string;
}

const rules = new Map<string, ArgumentRules>(
  SEARCH_PLAN_TOOLS.map((tool) => {
    const parameters = tool.function.parameters as { properties: Record<string, { type: string | string[] }>; required: string[] };
    const properties = Object.fromEntries(Object.entries(parameters.properties).map(([key, value]) => [key, ([] as string[]).concat(value.type)]));
    const usage = `${tool.function.name} takes {${Object.entries(properties)
      .map(([key, types]) => `${key}${parameters.required.includes(key) ? "" : "?"}: ${types.join(" | ")}`)
      .join(", ")}}`;
    return [tool.function.name, { properties, required: parameters.required, usage }];
  }),
);

function describeType(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "number") return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return `a ${typeof value}`;
}

/**
 * Checks a tool call's arguments against the schema: an object, required keys present, no extra keys,
 * primitive types right. Returns an error sentence that says how to call the tool, or null.
 */
export function checkArguments(name: string, args: unknown): string | null {
  const rule = rules.get(name);
  if (!rule) return null;
  if (typeof args !== "object" || args === null || Array.isArray(args)) return `${name}: arguments must be a JSON object; ${rule.usage}`;
  const input = args as Record<string, unknown>;
  for (const key in input) {
    // Own keys only: an argument named `constructor` or `__proto__` is an unexpected argument, not a prototype member.
    const expected = Object.hasOwn(rule.properties, key) ? rule.properties[key] : undefined;
    if (!expected) return `${name}: unexpected argument '${key}'; ${rule.usage}`;
    const value = input[key];
    if (value === undefined || value === null) continue;
    const actual = typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value;
    if (!expected.some((type) => type === actual || (type === "number" && actual === "integer"))) {
      return `${name}: argument '${key}' must be ${expected.join(" or ")}, got ${describeType(value)}; ${rule.usage}`;
    }
  }
  for (const key of rule.required) {
    if (input[key] === undefined || input[key] === null) return `${name}: missing required argument '${key}'; ${rule.usage}`;
  }
  return null;
}

/** Ranges and values the shapes above do not cover, each with the sentence the model reads. */
function checkValues(name: string, input: Record<string, unknown>): string | null {
  if (name === "search") {
    const limit = input.limit as number | undefined | null;
    const offset = input.offset as number | undefined | null;
    if ((input.query as string).trim() === "") return "search: query must not be empty; pass words to look for, e.g. a name";
    if (typeof limit === "number" && (limit < 1 || limit > SEARCH_LIMIT_MAX)) return `search: limit must be between 1 and ${SEARCH_LIMIT_MAX}, got ${limit}`;
    if (typeof offset === "number" && offset < 0) return `search: offset must be 0 or more, got ${offset}`;
  } else if (name === "finish" && input.status !== "done" && input.status !== "impossible") {
    return `finish: status must be "done" or "impossible", got ${JSON.stringify(input.status)}`;
  }
  return null;
}

/**
 * The episode driver's check of each tool's arguments: shapes, then ranges and values, passing the
 * arguments on as they came. Hand-written rather than zod's `safeParse` for its messages, which name the
 * tool's whole signature (recorded trajectories hold them), not for speed: bench/arguments.ts finds zod's
 * check no slower, and either is a few percent of a call through the driver.
 */
export const SEARCH_PLAN_VALIDATORS: ReadonlyMap<string, ArgumentValidator> = new Map(
  SEARCH_PLAN_TOOLS.map((tool): [string, ArgumentValidator] => {
    const name = tool.function.name;
    return [
      name,
      (args) => {
        const problem = checkArguments(name, args) ?? checkValues(name, args as Record<string, unknown>);
        return problem === null ? { ok: true, value: args } : { ok: false, message: problem };
      },
    ];
  }),
);
