import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SEARCH_PLAN_INPUTS, SEARCH_PLAN_TOOLS, SEARCH_PLAN_VALIDATORS, checkArguments } from "./tools.ts";

/** Issues the validators check after the shape check, with messages of their own. */
const CHECKED_BY_EPISODE = new Set(["too_big", "too_small", "invalid_value"]);

const corpus: unknown[] = [
  {},
  [],
  null,
  "text",
  7,
  { query: "Oriveth" },
  { query: 3 },
  { query: "x", limit: 11 },
  { query: "x", limit: 2.5 },
  { query: "x", offset: -1 },
  { query: "x", type: null },
  { query: "x", page: 2 },
  { id: "EMP-0192" },
  { id: 192 },
  { id: "EMP-0192", field: "status", value: "open" },
  { id: "EMP-0192", field: "budget", value: 48200 },
  { id: "EMP-0192", field: "budget", value: true },
  { id: "EMP-0192", field: "budget" },
  { source_id: "A-1", relation: "assigned_to", target_id: "B-2" },
  { source_id: "A-1", relation: ["assigned_to"], target_id: "B-2" },
  { status: "done" },
  { status: "done", answer: "Marrowfield" },
  { status: "maybe" },
  { status: "done", answer: 48200 },
  { answer: "x" },
  { query: "  " },
  { query: "x", limit: 10, offset: 0 },
  { query: "x", limit: 0 },
  { status: "impossible" },
];

/** Models send null for optional arguments; the validators read null as absent. */
function withoutNulls(args: unknown): unknown {
  return args && typeof args === "object" && !Array.isArray(args) ? Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null)) : args;
}

describe("search_plan_act tools", () => {
  it("derive the schemas the model has always seen from zod (byte for byte)", () => {
    assert.equal(
      JSON.stringify(SEARCH_PLAN_TOOLS[0]?.function.parameters),
      '{"type":"object","properties":{"query":{"type":"string","description":"Words to look for, e.g. a name (\\"Oriveth Calloway\\"), a code (\\"PX-44712\\") or a field value."},"type":{"type":"string","description":"Only return records of this type, e.g. \\"project\\"."},"limit":{"type":"integer","minimum":1,"maximum":10,"description":"Hits per page, 1-10 (default 5)."},"offset":{"type":"integer","minimum":0,"description":"Number of hits to skip (default 0), for paging through results."}},"required":["query"],"additionalProperties":false}',
    );
    assert.deepEqual(
      SEARCH_PLAN_TOOLS.map((tool) => tool.function.name),
      ["search", "read_record", "update_record", "link_records", "finish"],
    );
  });

  it("the fast shape check accepts exactly what the zod schemas accept (ranges and enums come after it)", () => {
    for (const [name, schema] of Object.entries(SEARCH_PLAN_INPUTS)) {
      for (const args of corpus) {
        const parsed = schema.safeParse(withoutNulls(args));
        const present = (path: readonly PropertyKey[]) =>
          path.length === 1 && (withoutNulls(args) as Record<PropertyKey, unknown>)[path[0] as PropertyKey] !== undefined;
        const shapeOk = parsed.success || parsed.error.issues.every((issue) => CHECKED_BY_EPISODE.has(issue.code) && present(issue.path));
        const fast = checkArguments(name, args);
        assert.equal(fast === null, shapeOk, `${name}(${JSON.stringify(args)}): fast check says ${fast ?? "ok"}`);
      }
    }
  });

  it("the episode driver's validators accept exactly what the zod schemas accept, except a blank query", () => {
    for (const [name, schema] of Object.entries(SEARCH_PLAN_INPUTS)) {
      const validate = SEARCH_PLAN_VALIDATORS.get(name);
      for (const args of corpus) {
        const blankQuery =
          name === "search" && typeof (args as { query?: unknown } | null)?.query === "string" && (args as { query: string }).query.trim() === "";
        const checked = validate?.(args);
        assert.equal(checked?.ok, schema.safeParse(withoutNulls(args)).success && !blankQuery, `${name}(${JSON.stringify(args)}): ${JSON.stringify(checked)}`);
        if (checked?.ok) assert.equal(checked.value, args, "accepted arguments pass on as they came");
      }
    }
    assert.deepEqual(SEARCH_PLAN_VALIDATORS.get("search")?.({ query: "x", limit: 11 }), {
      ok: false,
      message: "search: limit must be between 1 and 10, got 11",
    });
  });
});
