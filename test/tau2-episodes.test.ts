import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRandom, type AnyEnvironment, type JsonValue, type Trajectory } from "../src/core/index.ts";
import { normaliseTau2Line } from "../src/data/sft/tau2-record.ts";
import { getDomain } from "../src/envs/tau2/domains.ts";
import { Tau2Environment } from "../src/envs/tau2/environment.ts";
import { judgeUserPrompt, parseJudgeAnswer } from "../src/envs/tau2/judge.ts";
import { tau2Policies } from "../src/envs/tau2/policies.ts";
import { scenarioText } from "../src/envs/tau2/prompts.ts";
import { trajectoryMetrics } from "../src/runs/record.ts";
import { runEpisode } from "../src/rollout/run-episode.ts";
import { tau2MockEnvironment } from "../src/envs/tau2_mock/index.ts";
import { tau2RetailEnvironment } from "../src/envs/tau2_retail/index.ts";
import { tau2TelecomEnvironment } from "../src/envs/tau2_telecom/index.ts";

async function play(env: AnyEnvironment, split: string, index: number, policyId: string, given: Record<string, unknown> = {}): Promise<Trajectory> {
  const policy = tau2Policies.find((candidate) => candidate.id === policyId);
  assert.ok(policy);
  const config = env.configSchema.parse(given);
  const task = env.generate({ split, seed: 0, index, config });
  const agent = policy.create({ task, random: createRandom("test", policyId, split, index) });
  return runEpisode({ env, split, seed: 0, index, config, agent, task });
}

describe("tau2 episodes with the scripted user", () => {
  it("the oracle scores 1.0 on every retail task (none needs a judge for its scored part)", async () => {
    const ids = getDomain("retail").splits().base as string[];
    let partial = 0;
    for (let index = 0; index < ids.length; index++) {
      const trajectory = await play(tau2RetailEnvironment, "base", index, "oracle");
      assert.equal(trajectory.termination, "finished", `task ${ids[index]}`);
      assert.equal(trajectory.reward?.total, 1, `task ${ids[index]}: ${JSON.stringify(trajectory.reward?.components)}`);
      if (trajectory.reward?.diagnostics.partial === 1) {
        partial++;
        assert.equal(trajectory.reward.components.NL_ASSERTION, null, "unscored NL_ASSERTION is null");
        assert.equal(trajectory.reward.diagnostics.pass, 0, "a partial episode is never a pass");
      }
    }
    // 40 retail tasks carry NL assertions; without a judge they are partial.
    assert.equal(partial, 40);
  });

  it("the oracle scores 1.0 on every mock task except the one tau2 itself cannot pass", async () => {
    const ids = getDomain("mock").splits().base as string[];
    for (let index = 0; index < ids.length; index++) {
      const trajectory = await play(tau2MockEnvironment, "base", index, "oracle");
      const expected = ids[index] === "update_task_with_user_tools" ? 0 : 1;
      assert.equal(trajectory.reward?.total, expected, `task ${ids[index]}: ${JSON.stringify(trajectory.reward?.components)}`);
    }
  });

  for (const [split, count] of [
    ["base", 114],
    ["small", 20],
  ] as const) {
    it(`the oracle scores 1.0 on all ${count} telecom ${split} tasks, the user-side actions run by the scripted user`, async () => {
      const ids = getDomain("telecom").splits()[split] as string[];
      assert.equal(ids.length, count);
      for (let index = 0; index < ids.length; index++) {
        const trajectory = await play(tau2TelecomEnvironment, split, index, "oracle");
        assert.equal(trajectory.reward?.diagnostics.tau2_termination, "user_stop", `task ${ids[index]}`);
        assert.equal(trajectory.reward?.total, 1, `task ${ids[index]}: ${JSON.stringify(trajectory.reward?.components)}`);
      }
    });
  }

  it("telecom's splits are tau2's: base = train + test (leaderboard tasks, the default), small the legacy 20", () => {
    const splits = getDomain("telecom").splits();
    assert.deepEqual(Object.keys(splits).sort(), ["base", "small", "test", "train"]);
    assert.equal(splits.train?.length, 74);
    assert.equal(splits.test?.length, 40);
    assert.deepEqual([...(splits.train ?? []), ...(splits.test ?? [])].sort(), [...(splits.base ?? [])].sort());
    assert.equal(splits.small?.filter((id) => splits.base?.includes(id)).length, 0);
    assert.equal(tau2TelecomEnvironment.defaultSplit, "base");
  });

  it("doing nothing fails a task that needs a write, and the agent opens with tau2's greeting", async () => {
    const trajectory = await play(tau2RetailEnvironment, "base", 0, "do_nothing_stop");
    assert.equal(trajectory.messages[1]?.role, "assistant");
    assert.equal(trajectory.messages[1]?.content, "Hi! How can I help you today?");
    assert.equal(trajectory.messages[2]?.role, "user");
    assert.equal(trajectory.reward?.total, 0);
    assert.equal(trajectory.reward?.components.DB, 0);
  });
});

describe("tau2 copy-on-write databases", () => {
  it("an episode's writes never reach the shared DB or another episode", () => {
    const domain = getDomain("retail").domain;
    const first = new Tau2Environment(domain);
    const second = new Tau2Environment(domain);
    const fresh = first.dbHash();
    const result = first.getResponse({ name: "cancel_pending_order", arguments: { order_id: "#W6247578", reason: "no longer needed" } });
    assert.equal(result.error, false, result.content);
    assert.notEqual(first.dbHash(), fresh);
    assert.equal(second.dbHash(), fresh);
    assert.equal(new Tau2Environment(domain).dbHash(), fresh);
    // Structural sharing: untouched orders are the very same objects in both episodes.
    const orders = (env: Tau2Environment) => Object.fromEntries(env.agent.root.orders as Map<string, unknown>);
    assert.equal(orders(first)["#W2611340"], orders(second)["#W2611340"]);
    assert.notEqual(orders(first)["#W6247578"], orders(second)["#W6247578"]);
  });
});

describe("tau2 prompts, judge and export", () => {
  it("writes the scenario the way tau2's UserScenario prints it", () => {
    const task = getDomain("retail").tasks()[0];
    assert.ok(task);
    assert.equal(
      scenarioText(task),
      "Instructions:\n\tDomain: retail\n\tReason for call:\n\t\tYou received your order #W2378156 and wish to exchange the mechanical keyboard for the same one but with clicky switches and the smart thermostat for one compatible with Google Home instead of Apple HomeKit. If there is no keyboard that is clicky, RGB backlight, full size, you'd go for no backlight.\n\tKnown info:\n\t\tYou are Yusuf Rossi in zip code 19122.\n\tUnknown info:\n\t\tYou do not remember your email address.\n\tTask instructions:\n\t\tYou are detail-oriented and want to make sure everything is addressed in one go.",
    );
  });

  it("builds tau2's judge prompt (Python list repr) and reads its JSON answer", () => {
    const prompt = judgeUserPrompt(
      [
        { role: "assistant", content: "Done." },
        { role: "user", content: null },
      ],
      ["The agent's reply", "Plain"],
    );
    assert.ok(prompt.includes("assistant: Done.\nuser: None"));
    assert.ok(prompt.includes(`["The agent's reply", 'Plain']`));
    const checks = parseJudgeAnswer('{"results": [{"expectedOutcome": "Plain", "reasoning": "ok", "metExpectation": true}]}');
    assert.deepEqual(checks, [{ nl_assertion: "Plain", met: true, justification: "ok" }]);
  });

  it("exports every model turn as a row that toolgym sft tau2 reads, with the tools the agent was offered", async () => {
    const exporter = tau2MockEnvironment.exports?.["tau2-sft"];
    assert.ok(exporter);
    const lines = (trajectory: Trajectory) =>
      exporter
        .write([{ exampleId: 0, trajectory: trajectory as unknown as JsonValue, metrics: trajectoryMetrics(trajectory) }])
        .trim()
        .split("\n");
    const trajectory = await play(tau2MockEnvironment, "base", 0, "oracle");
    const rows = lines(trajectory);
    assert.equal(rows.length, trajectory.turns);
    for (const row of rows) {
      const example = normaliseTau2Line(row);
      assert.equal(example.target.role, "assistant");
      assert.equal(example.context[0]?.role, "system");
    }
    const first = normaliseTau2Line(rows[0] as string);
    assert.deepEqual(first.target.tool_calls, [{ name: "create_task", arguments: '{"user_id":"user_1","title":"Important Meeting"}' }]);
    assert.equal(first.metadata.correct, 1);
    const names = (example: ReturnType<typeof normaliseTau2Line>) => (example.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
    const offered = (config: Record<string, unknown>) => {
      const env = tau2MockEnvironment;
      return env.start(env.generate({ split: "base", seed: 0, index: 0, config: env.configSchema.parse(config) })).tools.map((tool) => tool.function.name);
    };
    assert.deepEqual(names(first), offered({}), "the leaderboard protocol's tools");
    const viaTool = normaliseTau2Line(lines(await play(tau2MockEnvironment, "base", 0, "oracle", { customer: "tool" })).at(-1) as string);
    assert.deepEqual(names(viaTool), offered({ customer: "tool" }), "send_message_to_user too under the customer-as-a-tool protocol");
    assert.ok(names(viaTool).includes("send_message_to_user"));
    assert.equal(viaTool.target.tool_calls?.[0]?.name, "send_message_to_user");
  });
});
