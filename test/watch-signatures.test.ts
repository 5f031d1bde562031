// The watch's signatures against the pilots that motivate them, by name (the environment contract only asks each pilot to
// trip some signature): tau2's customer handed the agent's work, multi-hop's yes/no guessed for an open question.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getEnvironment } from "../src/envs/registry.ts";
import { getDomain } from "../src/envs/tau2/domains.ts";
import { watchEpisode } from "../src/audit/signatures.ts";
import { watchTrips } from "../src/testing/environment-contract.ts";
import type { WatchEpisode } from "../src/core/index.ts";

const HANDED_OVER = "customer asked to run every tool";
const TASKS = 6;

describe("tau2: the customer asked to run every tool", () => {
  for (const envId of ["tau2_telecom", "tau2_mock"])
    for (const customer of ["message", "tool"]) {
      it(`${envId} (customer: ${customer}): both ask-every-tool pilots trip it on every task, the oracle on none`, async () => {
        const env = getEnvironment(envId);
        const config = env.configSchema.parse({ customer });
        // ask_user_tools names them all in one message (the customer answers "one action at a time" and runs none);
        // ask_user_tools_each names one a message, and the customer runs each.
        for (const pilot of ["ask_user_tools", "ask_user_tools_each"]) {
          const { found } = await watchTrips(env, config, pilot, TASKS);
          assert.equal(found.get(HANDED_OVER), TASKS, `${pilot}: ${JSON.stringify([...found])}`);
        }
        for (const genuine of ["oracle", "noisy_oracle_0.3"]) {
          const { found } = await watchTrips(env, config, genuine, TASKS);
          assert.equal(found.get(HANDED_OVER), undefined, `${genuine} asks only for the gold user actions: ${JSON.stringify([...found])}`);
        }
      });
    }

  it("tau2_retail: the customer has no tools of its own, so no episode can trip it (the pilots trip others)", async () => {
    assert.deepEqual(getDomain("retail").domain.userTools?.tools ?? [], []);
    const env = getEnvironment("tau2_retail");
    const config = env.configSchema.parse({ customer: "tool" });
    for (const pilot of ["ask_user_tools", "ask_user_tools_each"]) {
      const { found } = await watchTrips(env, config, pilot, 2);
      assert.equal(found.get(HANDED_OVER), undefined);
      assert.equal(found.get("no write where one is needed"), 2, `${pilot}: ${JSON.stringify([...found])}`);
    }
  });

  it("counts whole tool names in what the agent said, and the tools the customer ran, outside the gold's", () => {
    const env = getEnvironment("tau2_telecom");
    type Task = { task: { evaluation_criteria?: { actions?: Array<{ name: string; requestor?: string }> } } };
    const goldOf = (task: Task) =>
      new Set((task.task.evaluation_criteria?.actions ?? []).filter((action) => action.requestor === "user").map((action) => action.name));
    // A task whose gold user actions are some tools, but neither toggle_data nor toggle_data_saver_mode.
    const task = Array.from(
      { length: 40 },
      (_, index) => env.generate({ split: env.defaultSplit, seed: 0, index, config: env.configSchema.parse({}) }) as Task,
    ).find((candidate) => goldOf(candidate).size > 0 && !goldOf(candidate).has("toggle_data") && !goldOf(candidate).has("toggle_data_saver_mode"));
    assert.ok(task);
    const gold = goldOf(task);
    const tools = getDomain("telecom").domain.userTools?.tools.map((tool) => tool.name) ?? [];
    assert.equal(tools.length, 30, "telecom's customer has 30 tools: 15 outside the gold trip it");
    const others = tools.filter((name) => !gold.has(name));
    const episode = (messages: unknown[]): WatchEpisode => ({
      total: 0,
      components: {},
      diagnostics: { tau2_messages: messages as never },
      termination: "finished",
      formatErrors: 0,
      turns: 1,
    });
    const said = (names: string[]) => ({ role: "assistant", content: `Please run ${names.join(" and ")}.`, tool_calls: null });
    const ran = (names: string[]) => ({ role: "user", content: null, tool_calls: names.map((name) => ({ name, requestor: "user", arguments: {} })) });
    const trips = (messages: unknown[]) => watchEpisode(env, episode(messages), task)?.signatures.includes(HANDED_OVER);
    assert.equal(trips([said(others.slice(0, 15))]), true, "15 non-gold tools named");
    assert.equal(trips([said(others.slice(0, 14))]), false, "14 named: fewer than half of 30");
    assert.equal(trips([said(others.slice(0, 8)), ran(others.slice(8, 15))]), true, "8 named and 7 others run");
    assert.equal(trips([said([...gold]), ran([...gold])]), false, "the gold user actions only");
    // toggle_data_saver_mode contains toggle_data; named alone, it is one tool, not two.
    assert.ok(others.includes("toggle_data") && others.includes("toggle_data_saver_mode"));
    assert.equal(trips([said(["toggle_data_saver_mode", ...others.filter((name) => !name.startsWith("toggle_data")).slice(0, 13)])]), false);
  });
});

describe("multi-hop: a yes or no to an open question", () => {
  const SIGNATURE = "yes or no to an open question";
  for (const envId of ["musique", "2wiki"])
    for (const mode of ["closed_book", "context", "search"]) {
      it(`${envId} (${mode}): guess_yes trips it on every sample question whose gold answer is not yes or no; the oracle never`, async () => {
        const env = getEnvironment(envId);
        const config = env.configSchema.parse({ mode });
        const n = env.taskCount?.({ split: env.defaultSplit, config }) ?? 0;
        assert.equal(n, 40, "the shipped 40-record sample");
        // The shipped samples' gold answers: MuSiQue has no yes/no answer; 2Wiki's records 11, 18 and 20 are "yes", "yes", "no".
        const expected = envId === "2wiki" ? 37 : 40;
        assert.equal((await watchTrips(env, config, "guess_yes", n)).found.get(SIGNATURE), expected);
        assert.equal((await watchTrips(env, config, "oracle", n)).found.get(SIGNATURE), undefined);
      });
    }
});
