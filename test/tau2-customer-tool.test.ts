import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRandom, type AnyEnvironment, type Trajectory } from "../src/core/index.ts";
import { CUSTOMER_LEFT, CUSTOMER_TOOL } from "../src/envs/tau2/customer-tool.ts";
import { tau2Policies } from "../src/envs/tau2/policies.ts";
import { runEpisode } from "../src/rollout/run-episode.ts";
import { openingRequest } from "../src/envs/tau2/scripted-customer.ts";
import { getDomain, findTask } from "../src/envs/tau2/domains.ts";
import { runCli } from "./support/run-cli.ts";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { tau2MockEnvironment } from "../src/envs/tau2_mock/index.ts";
import { tau2RetailEnvironment } from "../src/envs/tau2_retail/index.ts";
import { tau2TelecomEnvironment } from "../src/envs/tau2_telecom/index.ts";

async function play(env: AnyEnvironment, split: string, index: number, policyId: string, customer: "message" | "tool"): Promise<Trajectory> {
  const policy = tau2Policies.find((candidate) => candidate.id === policyId);
  assert.ok(policy);
  const config = env.configSchema.parse({ customer });
  const task = env.generate({ split, seed: 0, index, config });
  const agent = policy.create({ task, random: createRandom("test", policyId, split, index) });
  return runEpisode({ env, split, seed: 0, index, config, agent, task });
}

/** tau2's record of the conversation without its timestamps (the part tau2's evaluator reads). */
function conversation(trajectory: Trajectory): unknown {
  const messages = trajectory.reward?.diagnostics.tau2_messages as { role: string; content?: string | null; tool_calls?: unknown }[];
  // An empty text and no text are one thing to tau2's evaluator (`has_text_content`).
  return messages.map((message) => ({ role: message.role, content: message.content || null, tool_calls: message.tool_calls ?? null }));
}

describe("tau2 with the customer as a tool (config customer: tool)", () => {
  it("offers send_message_to_user next to the domain tools only under that protocol", () => {
    const names = (customer: string) =>
      tau2MockEnvironment
        .start(tau2MockEnvironment.generate({ split: "base", seed: 0, index: 0, config: tau2MockEnvironment.configSchema.parse({ customer }) }))
        .tools.map((tool) => tool.function.name);
    assert.ok(names("tool").includes(CUSTOMER_TOOL));
    assert.ok(!names("message").includes(CUSTOMER_TOOL));
    assert.equal(names("tool").length, names("message").length + 1);
  });

  it("the oracle records the same tau2 conversation and reward as under tau2's protocol, on every mock task and a telecom and retail sample", async () => {
    const cases: [AnyEnvironment, string, number[]][] = [
      [tau2MockEnvironment, "base", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
      [tau2RetailEnvironment, "test", [0, 1, 2, 3]],
      [tau2TelecomEnvironment, "test", [0, 1, 2, 3]],
    ];
    let ones = 0;
    for (const [env, split, indices] of cases) {
      for (const index of indices) {
        const viaTool = await play(env, split, index, "oracle", "tool");
        const viaMessage = await play(env, split, index, "oracle", "message");
        const where = `${env.id} ${split}/${index}`;
        assert.deepEqual(conversation(viaTool), conversation(viaMessage), where);
        assert.equal(viaTool.reward?.total, viaMessage.reward?.total, where);
        assert.equal(viaTool.reward?.diagnostics.tau2_termination, "user_stop", where);
        if (viaTool.reward?.total === 1) ones++;
        // The customer's replies come back as the tool's results, the last one saying the conversation ended.
        const replies = viaTool.messages.filter((message) => message.role === "tool" && message.name === CUSTOMER_TOOL);
        assert.ok(replies.length >= 1, where);
        assert.ok(String(replies.at(-1)?.content).endsWith(CUSTOMER_LEFT), where);
        const fresh = env.start(env.generate({ split, seed: 0, index, config: env.configSchema.parse({ customer: "tool" }) }));
        const before = [...fresh.messages, ...((await fresh.opening?.()) ?? [])].filter((message) => message.role === "user").length;
        assert.equal(viaTool.messages.filter((message) => message.role === "user").length, before, `${where}: no plain user turn once the agent acts`);
      }
    }
    // Mock's update_task_with_user_tools cannot reach 1 in tau2 itself (define.ts); every other task does.
    assert.equal(ones, 17);
  });

  it("a message without tool calls ends the run before the customer has, and tau2 scores it 0", async () => {
    const trajectory = await play(tau2MockEnvironment, "base", 0, "oracle", "message");
    assert.equal(trajectory.reward?.total, 1);
    const config = tau2MockEnvironment.configSchema.parse({ customer: "tool" });
    const task = tau2MockEnvironment.generate({ split: "base", seed: 0, index: 0, config });
    const silent = await runEpisode({
      env: tau2MockEnvironment,
      split: "base",
      seed: 0,
      index: 0,
      config,
      task,
      agent: { id: "plain", act: async () => ({ message: { role: "assistant", content: "Your request has been handled. Is there anything else?" } }) },
    });
    assert.equal(silent.turns, 1);
    assert.equal(silent.reward?.total, 0);
    assert.equal(silent.diagnostics.agent_left, true);
    assert.equal(silent.diagnostics.customer, "tool");
  });

  it("the noisy oracles and the pilots play under it too, scoring as under tau2's protocol", async () => {
    const mean = async (policy: string, customer: "message" | "tool") => {
      let sum = 0;
      for (let index = 0; index < 10; index++) sum += (await play(tau2MockEnvironment, "base", index, policy, customer)).reward?.total ?? 0;
      return sum / 10;
    };
    const noisy = await mean("noisy_oracle_0.5", "tool");
    assert.ok(noisy < 0.9, `noisy_oracle_0.5 mean ${noisy}`);
    assert.equal(noisy, await mean("noisy_oracle_0.5", "message"));
    // One mock task is already solved in its initial state, so doing nothing scores 1 there.
    assert.equal(await mean("do_nothing_stop", "tool"), 0.1);
    assert.equal(await mean("do_nothing_stop", "message"), 0.1);
  });

  it("send_message_to_user answers a bad argument with the TypeError text and runs nothing", async () => {
    const config = tau2MockEnvironment.configSchema.parse({ customer: "tool" });
    const episode = tau2MockEnvironment.start(tau2MockEnvironment.generate({ split: "base", seed: 0, index: 0, config }));
    await episode.opening?.();
    const missing = await episode.callAsync?.(CUSTOMER_TOOL, {});
    assert.equal(missing?.isError, true);
    assert.match(missing?.content ?? "", /missing 1 required positional argument: 'content'/);
    const reply = await episode.callAsync?.(CUSTOMER_TOOL, { content: "How can I help?" });
    assert.equal(reply?.isError, false);
    assert.ok((reply?.content ?? "").length > 0);
    assert.equal(episode.callAsync?.("create_task", {}), undefined, "domain tools go through call");
  });

  it("toolgym dataset writes GRPO rows under the customer-tool protocol, each prompt ending with the customer's opening; tau2's protocol is refused", async () => {
    const work = mkdtempSync(join(tmpdir(), "toolgym-tau2-dataset-"));
    for (const [envId, domain] of [
      ["tau2_mock", "mock"],
      ["tau2_retail", "retail"],
      ["tau2_telecom", "telecom"],
    ]) {
      const out = join(work, `${envId}.jsonl`);
      const result = await runCli(["dataset", envId, "--split", envId === "tau2_mock" ? "base" : "train", "--n", "3", "--out", out]);
      assert.equal(result.code, 0, result.stderr);
      const rows = readFileSync(out, "utf8")
        .trim()
        .split("\n")
        .map(
          (line) =>
            JSON.parse(line) as {
              prompt: { role: string; content: string }[];
              env_version: string;
              config: string;
              prompt_hash: string;
              index: number;
              split: string;
            },
        );
      // Tasks whose reward needs a judge (NL assertions) are left out without one, and counted.
      const first = (getDomain(domain).splits()[envId === "tau2_mock" ? "base" : "train"] as string[]).slice(0, 3);
      const needJudge = first.filter((id) => {
        const criteria = findTask(getDomain(domain), id).evaluation_criteria;
        return (criteria?.reward_basis ?? []).includes("NL_ASSERTION") && (criteria?.nl_assertions ?? []).length > 0;
      }).length;
      assert.equal(rows.length, 3 - needJudge, envId);
      if (needJudge > 0) assert.match(result.stdout, new RegExp(`left out ${needJudge} of 3 tasks whose reward needs a judge`));
      for (const row of rows) {
        assert.equal(JSON.parse(row.config).customer, "tool");
        assert.equal(row.env_version, "1");
        const last = row.prompt.at(-1);
        const ids = getDomain(domain).splits()[row.split] as string[];
        const task = findTask(getDomain(domain), ids[row.index] as string);
        assert.equal(last?.role, "user", `${envId} row ${row.index}`);
        // The scripted customer's opening (a task with a message history may end on its own user turn instead).
        if (!task.initial_state?.message_history?.length) assert.equal(last?.content, openingRequest(task));
        const canonical = JSON.stringify(row.prompt.map((message) => [message.role, message.content]));
        assert.equal(row.prompt_hash, createHash("sha256").update(canonical, "utf8").digest("hex"));
      }
    }
    const refused = await runCli(["dataset", "tau2_mock", "--config", '{"customer":"message"}', "--n", "1", "--out", join(work, "refused.jsonl")]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /CONFIG_NOT_TRAINABLE/);
    assert.match(refused.stderr, /send_message_to_user/);
    assert.equal(refused.stderr.trim().split("\n").length, 1);
  });

  it("toolgym eval runs the same protocol and its tau2 block says which protocol the numbers used", async () => {
    const work = mkdtempSync(join(tmpdir(), "toolgym-tau2-protocol-"));
    for (const [config, protocol] of [
      ['{"customer":"tool"}', "customer_tool"],
      ["{}", "leaderboard"],
    ]) {
      const out = join(work, protocol);
      const result = await runCli(["eval", "--env", "tau2_mock", "--config", config, "--out", out, "--quiet"]);
      assert.equal(result.code, 0, result.stderr);
      const parent = join(out, readdirSync(out)[0] as string);
      const summary = JSON.parse(readFileSync(join(parent, readdirSync(parent)[0] as string, "summary.json"), "utf8"));
      assert.equal(summary.tau2.protocol, protocol);
      assert.equal(summary.tau2.pass_hat["1"], 0.9, "the oracle solves every task tau2 can solve, under either protocol");
      assert.equal(/customer as a tool/.test(summary.tau2.text), protocol === "customer_tool");
    }
  });
});
