import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { parseChatCompletion } from "../src/agents/openai/parse-reply.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { prepareModel } from "../src/eval/agent-factory.ts";
import { EpisodeDriver } from "../src/rollout/episode-driver.ts";

/**
 * A tool call driven from outside (the environment server, a trainer) reaches tau2's tools with json.loads'
 * types, as an eval's calls do; the expected outputs are tau2's own (fixtures/tau2/typed-arguments, refuel_float
 * and refuel_int, made by tau2's Python).
 */
const cases = readFileSync(new URL("./fixtures/tau2/typed-arguments/cases.jsonl", import.meta.url), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line.replace(/\bNaN\b|-?Infinity\b/g, "null")) as { case_id: string; expected: { tool_results: { content: string }[] } });
const expected = (label: string) => cases.find((item) => item.case_id.endsWith(`/typed/${label}`))?.expected.tool_results[0]?.content;

describe("tau2 tool calls keep Python's types on every path", () => {
  for (const [label, text] of [
    ["refuel_float", '{"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0}'],
    ["refuel_int", '{"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2}'],
  ] as const) {
    it(`the driver's call with ${label}'s text answers as tau2 does`, () => {
      const env = getEnvironment("tau2_telecom");
      const config = env.configSchema.parse({});
      const driver = new EpisodeDriver({ env, split: "small", seed: 0, index: 0, config });
      const outcome = driver.call({ id: "c1", name: "refuel_data", arguments: text });
      assert.equal(outcome.content, expected(label));
    });
  }

  it("<tool_call> text stays text unless recovery is asked for", () => {
    const reply = { choices: [{ finish_reason: "stop", message: { content: '<tool_call>{"name": "get_users", "arguments": {}}</tool_call>' } }] };
    const kept = parseChatCompletion(reply, { protocol: "tools", callIdPrefix: "x", recoverTextToolCalls: false });
    assert.equal(kept.message.tool_calls, undefined);
    assert.match(kept.message.content ?? "", /<tool_call>/);
    const recovered = parseChatCompletion(reply, { protocol: "tools", callIdPrefix: "x" });
    assert.equal(recovered.message.tool_calls?.[0]?.function.name, "get_users");
  });

  it("tau2 envs default to tau2's request (temperature 0, tool_choice auto, no recovery); the run records it", () => {
    const spec = { kind: "openai" as const, label: "m", name: "m", baseUrls: ["http://127.0.0.1:9/v1"] };
    assert.deepEqual(prepareModel(spec, getEnvironment("tau2_mock")).sampling, {
      temperature: 0,
      seed_per_trial: true,
      tool_choice: "auto",
      recover_text_tool_calls: false,
    });
    const optedIn = prepareModel({ ...spec, sampling: { temperature: 0.7 }, recoverTextToolCalls: true }, getEnvironment("tau2_mock")).sampling;
    assert.equal(optedIn?.temperature, 0.7);
    assert.equal(optedIn?.recover_text_tool_calls, true);
    assert.deepEqual(prepareModel(spec, getEnvironment("search_plan_act")).sampling, { recover_text_tool_calls: true });
  });
});
