import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { domainIds, getDomain } from "../src/envs/tau2/domains.ts";
import { Tau2Environment } from "../src/envs/tau2/environment.ts";
import { replayCalls, type ReplayInput } from "../src/envs/tau2/replay.ts";
import { PythonFloat, parsePythonJson } from "../src/python-semantics/index.ts";

/**
 * Every reference case produced by tau2-bench's own Python code is reproduced exactly: each tool
 * output, the agent and user DB hashes, the reward, every RewardInfo field, the evaluator's own errors.
 */
const fixtures = new URL("./fixtures/tau2/", import.meta.url);
interface ReplayCase extends ReplayInput {
  case_id: string;
  domain: string;
  task_id: string;
  expected: Record<string, unknown> & { tool_results: unknown[] };
}

/** A json.loads value as plain JSON (floats as numbers, objects as objects), for the expectations. */
function plain(value: unknown): unknown {
  if (value instanceof PythonFloat) return value.value;
  if (value instanceof Map) return plain(Object.fromEntries(value));
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plain(item)]));
  return value;
}
/** The calls as tau2's json.loads typed them (`2.0` stays a float, `Infinity` and `NaN` allowed); the expectations as plain JSON. */
const readCases = (name: string) =>
  readFileSync(new URL(name, fixtures), "utf8")
    .trim()
    .split("\n")
    .map((line) => {
      const parsed = parsePythonJson(line) as { tool_calls: ReplayInput["tool_calls"] };
      return { ...(plain(parsed) as ReplayCase), tool_calls: parsed.tool_calls };
    });
const cases = [...readCases("replay_cases.jsonl"), ...readCases("typed-arguments/cases.jsonl")];

describe("tau2 replay cases", () => {
  for (const domain of ["retail", "mock", "telecom"]) {
    const selected = cases.filter((item) => item.domain === domain);
    it(`${domain}: ${selected.length} cases reproduce tau2's outputs`, (context) => {
      if (!domainIds().includes(domain)) assert.fail(`domain ${domain} is not implemented`);
      for (const item of selected) {
        const expected = item.expected;
        const got = replayCalls(domain, item.task_id, item);
        const where = item.case_id;
        assert.deepEqual(got.tool_results, expected.tool_results, `${where}: tool results`);
        assert.equal(got.db_hash, expected.db_hash, `${where}: db hash`);
        assert.equal(got.user_db_hash, expected.user_db_hash, `${where}: user db hash`);
        assert.equal(got.reward, expected.reward, `${where}: reward`);
        assert.deepEqual(got.reward_info, expected.reward_info, `${where}: reward info`);
        assert.equal(got.evaluation_error, expected.evaluation_error, `${where}: evaluation error`);
        assert.equal(got.partial, expected.nl_assertion_skipped, `${where}: partial`);
        assert.equal(got.reward_ignore_basis, expected.reward_ignore_basis, `${where}: reward ignoring basis`);
        assert.deepEqual(got.reward_info_ignore_basis, expected.reward_info_ignore_basis, `${where}: reward info ignoring basis`);
        assert.equal(got.evaluation_error_ignore_basis, expected.evaluation_error_ignore_basis, `${where}: error ignoring basis`);
      }
      context.diagnostic(`${selected.length} cases`);
    });
  }
});

describe("tau2 fresh databases and tool schemas", () => {
  const hashes = JSON.parse(readFileSync(new URL("db_hashes.json", fixtures), "utf8"));
  const schemas = JSON.parse(readFileSync(new URL("tool_schemas.json", fixtures), "utf8"));
  for (const domain of domainIds()) {
    it(`${domain}: fresh DB hashes equal tau2's`, () => {
      const environment = new Tau2Environment(getDomain(domain).domain);
      assert.equal(environment.dbHash(), hashes[domain].db_hash);
      assert.equal(environment.userDbHash(), hashes[domain].user_db_hash);
    });
    it(`${domain}: every tool tau2 offers is implemented with its parameters`, () => {
      const { tools, userTools } = getDomain(domain).domain;
      for (const [side, toolkit] of [
        ["assistant", tools],
        ["user", userTools],
      ] as const) {
        const offered = (schemas[domain][side] ?? []) as { function: { name: string; parameters: { properties: object } } }[];
        assert.deepEqual((toolkit?.tools ?? []).map((tool) => tool.name).sort(), offered.map((tool) => tool.function.name).sort(), `${side} tool names`);
        for (const schema of offered) {
          const tool = toolkit?.tools.find((candidate) => candidate.name === schema.function.name);
          assert.deepEqual(tool?.params, Object.keys(schema.function.parameters.properties), `${schema.function.name} parameters`);
        }
      }
    });
  }
});

describe("tau2 telecom task sets in replay", () => {
  it("finds a task id of either telecom set: gold calls of a base task and of a small task score 1", () => {
    for (const split of ["base", "small"]) {
      const taskId = (getDomain("telecom").splits()[split] as string[])[0] as string;
      const task = getDomain("telecom")
        .tasks()
        .find((candidate) => candidate.id === taskId);
      const calls = (task?.evaluation_criteria?.actions ?? []).map((action) => ({
        name: action.name,
        arguments: action.arguments,
        requestor: action.requestor,
      }));
      assert.ok(calls.length > 0, `${taskId} has gold calls`);
      assert.equal(replayCalls("telecom", taskId, { tool_calls: calls }).reward, 1, `${split}: ${taskId}`);
    }
  });
});
