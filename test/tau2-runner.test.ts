import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { JsonValue } from "../src/core/index.ts";
import { parsePythonJson } from "../src/python-semantics/index.ts";
import { getDomain } from "../src/envs/tau2/domains.ts";
import { summarizeTau2 } from "../src/envs/tau2/summary.ts";
import { TAU2_DEFAULT_SEED, tau2TrialSeeds } from "../src/envs/tau2/trials.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { prepareModel } from "../src/eval/agent-factory.ts";
import { summaryEpisodeOf } from "../src/eval/benchmark-summary.ts";
import { playEpisode } from "../src/eval/episode.ts";
import type { ResultRecord } from "../src/runs/schemas.ts";
import { startTau2ScriptServer, type LoggedRequest, type ScriptScenario } from "../src/testing/tau2-script-server.ts";

/**
 * toolgym's tau2 runs against tau2's own runner (`run_domain` at a2c0247), both driven by one scripted
 * OpenAI-compatible server playing the agent, the user simulator and the judge (fixtures/tau2/runner, made
 * by tau2's Python): each simulation's messages, termination reason and reward, the run's avg_reward, pass^k
 * and infrastructure errors (tau2's retries included), and every request body each runner sent.
 */
interface Scenario extends ScriptScenario {
  domain: string;
  task_id: string;
  num_trials: number;
  max_steps?: number;
  max_errors?: number;
}
interface Simulation {
  trial: number;
  seed: number;
  termination_reason: string;
  reward: number | null;
  messages: Record<string, unknown>[];
}
interface Reference {
  name: string;
  simulations: Simulation[];
  metrics: { avg_reward: number; pass_hat_ks: Record<string, number>; infra_error_count: number; total_simulations: number };
  requests: LoggedRequest[];
}

const folder = join(import.meta.dirname, "fixtures/tau2/runner");
const scenarios = (JSON.parse(readFileSync(join(folder, "scenarios.json"), "utf8")) as { scenarios: Scenario[] }).scenarios;
const referenceText = readFileSync(join(folder, "reference.json"), "utf8");
const references = new Map((JSON.parse(referenceText) as { scenarios: Reference[] }).scenarios.map((item) => [item.name, item]));
/** The simulations' messages as json.loads reads them: a tool call's `2.0` stays a float. */
const typedMessages = new Map(
  (parsePythonJson(referenceText) as unknown as { scenarios: Reference[] }).scenarios.map((item) => [
    item.name,
    item.simulations.map((simulation) => simulation.messages),
  ]),
);
const JUDGE = "gpt-4.1-2025-04-14";

/** A tau2 message as the reference keeps it (no timestamps, costs or turn indices). */
function messageRecord(message: Record<string, JsonValue>): Record<string, unknown> {
  if (message.role === "tool") return { role: "tool", content: message.content, id: message.id, requestor: message.requestor, error: message.error };
  const calls = message.tool_calls as Record<string, JsonValue>[] | null;
  return {
    role: message.role,
    content: message.content,
    tool_calls: calls
      ? calls.map((call) => ({ id: call.id, name: call.name, arguments: parsePythonJson(call.arguments_json as string), requestor: call.requestor }))
      : null,
  };
}

async function play(scenario: Scenario, url: string): Promise<ResultRecord[]> {
  const env = getEnvironment(`tau2_${scenario.domain}`);
  const splits = getDomain(scenario.domain).splits();
  const split = Object.keys(splits).find((name) => splits[name]?.includes(scenario.task_id)) as string;
  const index = (splits[split] as string[]).indexOf(scenario.task_id);
  const config = env.configSchema.parse({
    user_model: `${url}#${scenario.name}/user`,
    judge_model: `${url}#${JUDGE}`,
    ...(scenario.max_steps !== undefined ? { max_steps: scenario.max_steps } : {}),
    ...(scenario.max_errors !== undefined ? { max_errors: scenario.max_errors } : {}),
  });
  const row = { env, config, split, seed: TAU2_DEFAULT_SEED, n: index + 1, samples: scenario.num_trials };
  const model = prepareModel({ kind: "openai", label: "scripted", name: scenario.name, baseUrls: [url], maxRetries: 0 }, env);
  const seeds = tau2TrialSeeds(TAU2_DEFAULT_SEED, scenario.num_trials);
  const records: ResultRecord[] = [];
  for (let trial = 0; trial < scenario.num_trials; trial++) {
    const slot = { index, sample: trial, trialSeed: seeds[trial] as number, id: `${scenario.name}/${trial}` };
    records.push((await playEpisode(row, model, slot, new AbortController().signal)) as ResultRecord);
  }
  return records;
}

describe("tau2 runs against tau2's own runner, one scripted server for both", () => {
  for (const scenario of scenarios) {
    it(scenario.name, { timeout: 120_000 }, async () => {
      const reference = references.get(scenario.name);
      assert.ok(reference, "a reference for every scenario (make_reference.py)");
      const server = await startTau2ScriptServer(scenarios);
      let records: ResultRecord[];
      try {
        records = await play(scenario, server.url);
      } finally {
        await server.close();
      }
      for (const simulation of reference.simulations) {
        const record = records[simulation.trial] as ResultRecord;
        const trajectory = (record.info as { trajectory: Record<string, JsonValue> }).trajectory;
        const diagnostics = trajectory.diagnostics as Record<string, JsonValue>;
        const where = `trial ${simulation.trial}`;
        assert.equal(record.trial_seed, simulation.seed, `${where}: seed`);
        if (simulation.termination_reason === "infrastructure_error") {
          // tau2 re-ran it 3 more times with the same seed, then recorded an infrastructure error.
          assert.equal(diagnostics.simulation_attempts, 4, `${where}: attempts`);
          assert.equal(diagnostics.retries_exhausted, true, `${where}: retries exhausted`);
          continue;
        }
        const reward = trajectory.reward as Record<string, JsonValue>;
        const rewardDiagnostics = reward.diagnostics as Record<string, JsonValue>;
        assert.equal(rewardDiagnostics.tau2_termination, simulation.termination_reason, `${where}: termination`);
        const expectedMessages: unknown = typedMessages.get(scenario.name)?.[reference.simulations.indexOf(simulation)];
        assert.deepEqual((rewardDiagnostics.tau2_messages as Record<string, JsonValue>[]).map(messageRecord), expectedMessages, `${where}: messages`);
        assert.equal(reward.total, simulation.reward, `${where}: reward`);
      }
      const summary = summarizeTau2(records.filter((record) => record.status === "scored").map(summaryEpisodeOf));
      const exhausted = records.filter((record) => {
        const trajectory = (record.info as { trajectory: { diagnostics: Record<string, JsonValue> } }).trajectory;
        return trajectory.diagnostics.retries_exhausted === true;
      }).length;
      assert.equal(exhausted, reference.metrics.infra_error_count, "infrastructure errors");
      assert.equal(summary.simulations, reference.metrics.total_simulations, "simulations tau2's metrics count");
      if (reference.metrics.total_simulations > 0) {
        assert.equal(summary.avg_reward, reference.metrics.avg_reward, "avg_reward");
        assert.deepEqual(summary.pass_hat, reference.metrics.pass_hat_ks, "pass^k");
      }
      // What each runner sent, request by request: tau2's agent, user and judge requests.
      const sent = server.requests.filter((request) => request.scenario === scenario.name);
      assert.equal(sent.length, reference.requests.length, "as many requests as tau2 sent");
      sent.forEach((request, position) => {
        const expected = reference.requests[position] as LoggedRequest;
        const where = `request ${position} (${expected.role}, trial ${expected.trial}, position ${expected.position}, asked ${expected.asked})`;
        assert.deepEqual(
          [request.role, request.trial, request.position, request.asked],
          [expected.role, expected.trial, expected.position, expected.asked],
          where,
        );
        assert.deepEqual(request.body, expected.body, `${where}: body`);
      });
    });
  }
});
