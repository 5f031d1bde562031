import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import {
  EnvConfigError,
  defineEnvironment,
  toolError,
  toolResult,
  type ArgumentPolicy,
  type Episode,
  type RejectedCall,
  type ToolResult,
} from "../core/index.ts";
import { createToolbox, defineTool } from "../envs/_kit/toolbox.ts";
import { mockEnvironment } from "../envs/mock/index.ts";
import { EpisodeDriver } from "./episode-driver.ts";

/** What a test episode's tools saw: every call that reached `Episode.call`, with its arguments. */
interface Seen {
  calls: Array<[string, unknown]>;
}

const toolbox = createToolbox<Seen>([
  defineTool({
    name: "add",
    description: "Add an amount.",
    kind: "write",
    input: z.strictObject({ amount: z.number().int().min(1), note: z.string().default("none") }),
    execute(seen, input) {
      seen.calls.push(["add", input]);
      return toolResult({ ok: true });
    },
  }),
]);

/**
 * A one-tool environment whose episodes record what reaches them. `policy` and `rejected` vary what the
 * driver does; `validators: false` leaves them out.
 */
function recordingEnvironment(options: { policy?: ArgumentPolicy; rejected?: (call: RejectedCall) => ToolResult | undefined; validators?: boolean } = {}) {
  const seen: Seen = { calls: [] };
  const rejectedCalls: RejectedCall[] = [];
  const env = defineEnvironment<Record<string, never>, number>({
    id: "recording",
    version: "1",
    description: "Records what reaches its episodes.",
    protocol: "tools",
    splits: ["eval"],
    defaultSplit: "eval",
    configSchema: z.strictObject({}),
    ...(options.policy ? { argumentPolicy: options.policy } : {}),
    maxTurns: () => 10,
    generate: ({ index }) => index,
    publicView: () => ({}),
    solution: () => ({}),
    start: (): Episode => ({
      protocol: "tools",
      messages: [{ role: "user", content: "add" }],
      tools: toolbox.specs,
      ...(options.validators === false ? {} : { validators: toolbox.validators }),
      done: false,
      call(name, args) {
        if (options.policy === "environment") {
          seen.calls.push([name, args]);
          return typeof (args as { amount?: unknown }).amount === "number" ? toolResult({ ok: true }) : toolError("invalid_arguments", "amount: a number");
        }
        return toolbox.run(seen, name, args);
      },
      ...(options.rejected
        ? {
            rejected(call: RejectedCall) {
              rejectedCalls.push(call);
              return options.rejected?.(call);
            },
          }
        : {}),
      reward: ({ formatErrors }) => ({ total: 1, components: {}, formula: "1", errors: [], diagnostics: { formatErrors: formatErrors ?? null } }),
    }),
  });
  const driver = new EpisodeDriver({ env, split: "eval", seed: 0, index: 0, config: {} });
  return { driver, seen, rejectedCalls };
}

describe("episode driver: it owns tool calls", () => {
  it("hands the episode the validator's typed arguments (defaults filled in), parsed from model text once", () => {
    const { driver, seen } = recordingEnvironment();
    assert.equal(driver.call({ name: "add", arguments: '{"amount": 2}' }).isError, false);
    assert.equal(driver.call({ name: "add", arguments: { amount: 3, note: "x" } }).isError, false);
    assert.deepEqual(seen.calls, [
      ["add", { amount: 2, note: "none" }],
      ["add", { amount: 3, note: "x" }],
    ]);
    assert.equal(driver.formatErrors.length, 0);
  });

  it("answers an unknown tool and invalid arguments itself, counts each once, and the episode never runs them", async () => {
    const { driver, seen } = recordingEnvironment();
    const unknown = driver.call({ name: "subtract", arguments: "{}" });
    assert.deepEqual(unknown, {
      content: JSON.stringify({ ok: false, error: "unknown tool 'subtract'; available tools: add" }),
      isError: true,
      errorKind: "unknown_tool",
      done: false,
    });
    const invalid = driver.call({ name: "add", arguments: '{"amount": "2"}' });
    assert.equal(invalid.errorKind, "invalid_arguments");
    assert.deepEqual(JSON.parse(invalid.content), { ok: false, error: "add: argument 'amount': expected number, got the string \"2\"" });
    const prototypeKey = driver.call({ name: "add", arguments: '{"amount": 2, "__proto__": {"x": 1}}' });
    assert.deepEqual(JSON.parse(prototypeKey.content), { ok: false, error: "add: unexpected argument '__proto__'" });
    assert.deepEqual(seen.calls, []);
    const trajectory = await driver.trajectory({ agentId: "test" });
    assert.deepEqual(trajectory.formatErrors.byKind, { unknown_tool: 1, invalid_arguments: 2 });
    assert.equal(trajectory.formatErrors.count, 3);
    assert.equal(trajectory.reward?.diagnostics.formatErrors, 3, "the reward reads the driver's ledger");
    assert.deepEqual(
      trajectory.steps.map((step) => step.errorKind),
      ["unknown_tool", "invalid_arguments", "invalid_arguments"],
    );
  });

  it("lets the episode answer a refused call in its own words, still counted once", () => {
    const { driver, rejectedCalls } = recordingEnvironment({ rejected: (call) => toolError(call.errorKind, `penalised: ${call.message}`) });
    const refused = driver.call({ name: "add", arguments: { amount: 2, by: 1 } });
    assert.deepEqual(JSON.parse(refused.content), { ok: false, error: "penalised: add: unexpected argument 'by'" });
    driver.call({ name: "sub", arguments: {} });
    assert.deepEqual(
      rejectedCalls.map((call) => [call.errorKind, call.name, call.args]),
      [
        ["invalid_arguments", "add", { amount: 2, by: 1 }],
        ["unknown_tool", "sub", {}],
      ],
    );
    assert.deepEqual(
      driver.formatErrors.map((error) => error.kind),
      ["invalid_arguments", "unknown_tool"],
    );
  });

  it("under the environment's own argument policy, passes arguments as parsed and counts the environment's refusals once", () => {
    const { driver, seen } = recordingEnvironment({ policy: "environment" });
    driver.call({ name: "add", arguments: '{"amount": "2", "extra": null}' });
    driver.call({ name: "teleport", arguments: "{}" });
    assert.deepEqual(seen.calls, [
      ["add", { amount: "2", extra: null }],
      ["teleport", {}],
    ]);
    assert.deepEqual(
      driver.formatErrors.map((error) => error.kind),
      ["invalid_arguments", "unknown_tool", "invalid_arguments"],
    );
  });

  it("refuses to drive an episode that offers tools without validators unless its environment checks arguments itself", () => {
    assert.throws(
      () => recordingEnvironment({ validators: false }),
      (error: unknown) =>
        error instanceof EnvConfigError && error.code === "ENV_TOOLS_UNCHECKED" && /offer tools but no argument validators/.test(error.message),
    );
    assert.doesNotThrow(() => recordingEnvironment({ validators: false, policy: "environment" }));
  });

  it("reads a request's name and arguments for the server: a tool name and a JSON object, or what is wrong", async () => {
    const { callRequestProblem } = await import("./parse-arguments.ts");
    assert.equal(callRequestProblem("lookup", { key: "x" }), undefined);
    assert.equal(callRequestProblem("lookup", undefined), undefined);
    assert.equal(callRequestProblem(3, {})?.field, "name");
    assert.equal(callRequestProblem("", {})?.field, "name");
    for (const args of [[1], "{}", 7, true]) assert.equal(callRequestProblem("lookup", args)?.field, "arguments", JSON.stringify(args));
    // The mock environment's own episode, driven the same way the server drives a session.
    const task = mockEnvironment.generate({ split: "eval", seed: 0, index: 0, config: { keys: 5 } });
    const driver = new EpisodeDriver({ env: mockEnvironment, split: "eval", seed: 0, index: 0, config: { keys: 5 }, task, transcript: false });
    assert.equal(driver.call({ name: "lookup", arguments: { key: task.key } }).isError, false);
    assert.equal(driver.call({ name: "lookup", arguments: { key: 5 } }).errorKind, "invalid_arguments");
    assert.equal(driver.formatErrors.length, 1);
  });
});
