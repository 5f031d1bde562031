import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { toolError, toolResult } from "../../core/index.ts";
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

  it("validates once and runs the tool on valid arguments", () => {
    const state = { total: 0 };
    assert.deepEqual(JSON.parse(toolbox.call(state, "add", { amount: 3 }).content), { total: 3 });
    assert.equal(state.total, 3);
  });

  it("answers bad arguments with one readable invalid_arguments error and changes nothing", () => {
    const state = { total: 0 };
    const cases: Array<[unknown, string]> = [
      [{ amount: "3" }, "add: argument 'amount': expected number, got the string \"3\""],
      [{}, "add: missing required argument 'amount'"],
      [{ amount: 2, colour: "red" }, "add: unexpected argument 'colour'"],
      [{ amount: 11 }, "add: argument 'amount': Too big: expected number to be <=10, got the number 11"],
      [[1], "add: arguments: expected object, got an array"],
    ];
    for (const [args, message] of cases) {
      const result = toolbox.call(state, "add", args);
      assert.equal(result.isError, true);
      assert.equal(result.errorKind, "invalid_arguments");
      assert.deepEqual(JSON.parse(result.content), { ok: false, error: message });
    }
    assert.equal(state.total, 0);
    const unknown = toolbox.call(state, "subtract", {});
    assert.equal(unknown.errorKind, "unknown_tool");
    assert.match(unknown.content, /available tools: add/);
  });
  it("lets an environment decide what a refused call does (BabyAI: it still costs a step)", () => {
    const steps: string[] = [];
    const costly = createToolbox<Counter>(
      [
        defineTool({
          name: "add",
          description: "Add one.",
          kind: "write",
          input: z.strictObject({}),
          execute: (state) => toolResult({ total: ++state.total }),
        }),
      ],
      {
        rejected(state, call) {
          steps.push(`${call.errorKind}:${call.name}:${JSON.stringify(call.args)}`);
          state.total -= 1;
          return toolError(call.errorKind, `penalised: ${call.message}`);
        },
      },
    );
    const state = { total: 0 };
    assert.equal(costly.call(state, "add", { by: 2 }).content, JSON.stringify({ ok: false, error: "penalised: add: unexpected argument 'by'" }));
    assert.equal(costly.call(state, "sub", {}).errorKind, "unknown_tool");
    assert.deepEqual(steps, ['invalid_arguments:add:{"by":2}', "unknown_tool:sub:{}"]);
    assert.equal(state.total, -2);
  });
});
