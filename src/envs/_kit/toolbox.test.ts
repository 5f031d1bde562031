import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { toolResult, type ArgumentValidator } from "../../core/index.ts";
import { createToolbox, defineTool } from "./toolbox.ts";

interface Counter {
  total: number;
}

const toolbox = createToolbox<Counter>([
  defineTool({
    name: "add",
    description: "Add an amount to the counter.",
    kind: "write",
    input: z.strictObject({
      amount: z.number().int().min(1).max(10).describe("How much to add, 1-10."),
      note: z.string().optional().describe("Why."),
    }),
    execute(state, { amount }) {
      state.total += amount;
      return toolResult({ total: state.total });
    },
  }),
]);

describe("toolbox: zod-defined tools", () => {
  it("derives the JSON Schema the model sees from the zod schema", () => {
    assert.deepEqual(toolbox.specs, [
      {
        type: "function",
        function: {
          name: "add",
          description: "Add an amount to the counter.",
          parameters: {
            type: "object",
            properties: {
              amount: { type: "integer", minimum: 1, maximum: 10, description: "How much to add, 1-10." },
              note: { type: "string", description: "Why." },
            },
            required: ["amount"],
            additionalProperties: false,
          },
        },
      },
    ]);
    assert.equal(toolbox.kind("add"), "write");
  });

  it("runs the tool on the arguments its validator returned", () => {
    const state = { total: 0 };
    const checked = toolbox.validators.get("add")?.({ amount: 3 });
    assert.deepEqual(checked, { ok: true, value: { amount: 3 } });
    assert.deepEqual(JSON.parse(toolbox.run(state, "add", checked?.ok ? checked.value : undefined).content), { total: 3 });
    assert.equal(state.total, 3);
  });

  it("refuses bad arguments with one readable sentence, prototype member names included", () => {
    const validate = toolbox.validators.get("add") as ArgumentValidator;
    const cases: Array<[unknown, string]> = [
      [{ amount: "3" }, "add: argument 'amount': expected number, got the string \"3\""],
      [{}, "add: missing required argument 'amount'"],
      [{ amount: 2, colour: "red" }, "add: unexpected argument 'colour'"],
      [{ amount: 11 }, "add: argument 'amount': Too big: expected number to be <=10, got the number 11"],
      [[1], "add: arguments: expected object, got an array"],
      [JSON.parse('{"amount": 2, "__proto__": 1}'), "add: unexpected argument '__proto__'"],
      [{ amount: 2, constructor: "x" }, "add: unexpected argument 'constructor'"],
    ];
    for (const [args, message] of cases) assert.deepEqual(validate(args), { ok: false, message }, JSON.stringify(args));
    assert.equal(toolbox.validators.has("subtract"), false);
  });
});
