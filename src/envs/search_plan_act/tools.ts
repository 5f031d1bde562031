import { defineTool, type ToolKind, type ToolSpec } from "../../core/index.ts";

/** The five tools of search_plan_act and search_plan_ood, as the model sees them. */
export const TOOL_KINDS: Record<string, ToolKind> = { search: "read", read_record: "read", update_record: "write", link_records: "write", finish: "finish" };

export const SEARCH_LIMIT_MAX = 10;

export const SEARCH_PLAN_TOOLS: ToolSpec[] = [
  defineTool({
    name: "search",
    description:
      "Full-text search (BM25) over record names and field values. Records whose name or code equals the query exactly come first. " +
      'Returns {"hits": [{id, type, name, snippet}], "total", "offset", "next_offset"} (next_offset only when more hits exist; pass it as offset to see the next page), ' +
      'or {"hits": [], "note": "no records match"}.',
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: 'Words to look for, e.g. a name ("Oriveth Calloway"), a code ("PX-44712") or a field value.' },
        type: { type: "string", description: 'Only return records of this type, e.g. "project".' },
        limit: { type: "integer", minimum: 1, maximum: SEARCH_LIMIT_MAX, description: "Hits per page, 1-10 (default 5)." },
        offset: { type: "integer", minimum: 0, description: "Number of hits to skip (default 0), for paging through results." },
      },
      required: ["query"],
      additionalProperties: false,
    },
  }),
  defineTool({
    name: "read_record",
    description:
      'Read one record by id. Returns {id, type, name, fields: {...}, links: [{relation, target_id, target_name}]}, or {"ok": false, "error"} for an unknown id.',
    parameters: {
      type: "object",
      properties: { id: { type: "string", description: 'Record id as it appears in search results or links, e.g. "EMP-0192".' } },
      required: ["id"],
      additionalProperties: false,
    },
  }),
  defineTool({
    name: "update_record",
    description:
      'Set one field of a record. Returns {"ok": true, "previous", "current"} or {"ok": false, "error"} (unknown id, unknown field, wrong type, value not allowed for an enum field, read-only field). ' +
      "Integer and money fields take numbers; date fields take YYYY-MM-DD; enum fields take one of their allowed values.",
    parameters: {
      type: "object",
      properties: {
        id: { type: "string", description: 'Record id, e.g. "PRJ-4471".' },
        field: { type: "string", description: 'Field name as shown by read_record, e.g. "status".' },
        value: { type: ["string", "number"], description: "The new value." },
      },
      required: ["id", "field", "value"],
      additionalProperties: false,
    },
  }),
  defineTool({
    name: "link_records",
    description:
      'Add a link "source -[relation]-> target". Returns {"ok": true} or {"ok": false, "error"} (unknown id, relation not allowed between these record types, link already present). ' +
      "Only the relations listed in the error message for a pair of types can be added; structural links (one per record) cannot be changed.",
    parameters: {
      type: "object",
      properties: {
        source_id: { type: "string", description: "Id of the record the link starts from." },
        relation: { type: "string", description: 'Relation name, e.g. "assigned_to".' },
        target_id: { type: "string", description: "Id of the record the link points to." },
      },
      required: ["source_id", "relation", "target_id"],
      additionalProperties: false,
    },
  }),
  defineTool({
    name: "finish",
    description:
      'End the episode. status "done" when the goal is reached (put the answer to a question in `answer`, exactly the value as it appears in the record); ' +
      'status "impossible" when the goal cannot be reached (the record or link it refers to does not exist); then change nothing.',
    parameters: {
      type: "object",
      properties: {
        status: { type: "string", enum: ["done", "impossible"], description: '"done" or "impossible".' },
        answer: { type: "string", description: 'The answer, for questions: just the value, e.g. "Marrowfield" or "48200".' },
      },
      required: ["status"],
      additionalProperties: false,
    },
  }),
];

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
    const expected = rule.properties[key];
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
