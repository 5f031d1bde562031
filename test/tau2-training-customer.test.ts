import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createRandom, type AnyEnvironment, type Trajectory } from "../src/core/index.ts";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { CUSTOMER_TOOL } from "../src/envs/tau2/customer-tool.ts";
import { findTask, getDomain } from "../src/envs/tau2/domains.ts";
import { TRAINING_PILOTS, tau2Policies } from "../src/envs/tau2/policies.ts";
import type { Tau2Task } from "../src/envs/tau2/types.ts";
import { tau2MockEnvironment } from "../src/envs/tau2_mock/index.ts";
import { tau2RetailEnvironment } from "../src/envs/tau2_retail/index.ts";
import { tau2TelecomEnvironment } from "../src/envs/tau2_telecom/index.ts";
import { runEpisode } from "../src/rollout/run-episode.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";
import { createScriptedAgent } from "../src/envs/_kit/scripted.ts";
import { runCli } from "./support/run-cli.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const tool = (env: AnyEnvironment) => env.configSchema.parse({ customer: "tool" });

async function play(env: AnyEnvironment, split: string, index: number, policyId: string): Promise<Trajectory> {
  const policy = tau2Policies.find((candidate) => candidate.id === policyId);
  assert.ok(policy, policyId);
  const config = tool(env);
  const task = env.generate({ split, seed: 0, index, config });
  return runEpisode({ env, split, seed: 0, index, config, task, agent: policy.create({ task, random: createRandom("test", policyId, index) }) });
}

/** An agent that plays the given lines to the customer, one a turn, through send_message_to_user. */
async function talk(env: AnyEnvironment, split: string, index: number, lines: string[]): Promise<Trajectory> {
  const config = tool(env);
  const task = env.generate({ split, seed: 0, index, config });
  const agent = createScriptedAgent("lines", ({ turn }) =>
    turn <= lines.length ? { calls: [{ name: CUSTOMER_TOOL, arguments: { content: lines[turn - 1] } }] } : { text: "bye" },
  );
  return runEpisode({ env, split, seed: 0, index, config, task, agent });
}

const customerTexts = (trajectory: Trajectory): string[] =>
  (trajectory.reward?.diagnostics.tau2_messages as { role: string; content?: string | null }[])
    .filter((message) => message.role === "user" && typeof message.content === "string")
    .map((message) => message.content as string);

const taskOf = (domain: string, split: string, index: number): Tau2Task => findTask(getDomain(domain), getDomain(domain).splits()[split]?.[index] as string);

/** Sentences of the scenario the customer must keep to itself: its task instructions, what it does not know, and its reason's conditions. */
function privateSentences(task: Tau2Task): string[] {
  const instructions = task.user_scenario.instructions;
  if (typeof instructions === "string") return [];
  const split = (text: string | null | undefined) => (text ?? "").split(/(?<=[.!?])\s+/).map((sentence) => sentence.trim());
  return [
    ...split(instructions.task_instructions),
    ...split(instructions.unknown_info),
    ...split(instructions.reason_for_call).filter((sentence) => /\bif\b/i.test(sentence)),
  ].filter((sentence) => sentence.length >= 25);
}

const needsJudge = (task: Tau2Task): boolean =>
  (task.evaluation_criteria?.reward_basis ?? []).includes("NL_ASSERTION") && (task.evaluation_criteria?.nl_assertions ?? []).length > 0;

describe("tau2's default customer under the training protocol (customer as a tool, no user model)", () => {
  it("no pilot that steers the customer earns more on any task than tau2 gives the do-nothing conversation (telecom, retail, mock)", async () => {
    // Every telecom and mock task; retail's first 20 test tasks (its episodes are the slowest to score).
    const cases: [AnyEnvironment, string, number][] = [
      [tau2TelecomEnvironment, "train", 74],
      [tau2TelecomEnvironment, "test", 40],
      [tau2RetailEnvironment, "test", 20],
      [tau2MockEnvironment, "base", 10],
    ];
    for (const [env, split, count] of cases) {
      assert.ok(count <= (env.taskCount?.({ split, config: tool(env) } as never) ?? 0));
      for (let index = 0; index < count; index++) {
        const floor = (await play(env, split, index, "do_nothing_stop")).reward?.total;
        assert.equal(typeof floor, "number");
        for (const pilot of TRAINING_PILOTS) {
          const total = (await play(env, split, index, pilot)).reward?.total;
          assert.ok((total as number) <= (floor as number), `${env.id} ${split}/${index} ${pilot}: ${total} > do-nothing ${floor}`);
        }
      }
    }
    // The telecom do-nothing conversation scores 0 everywhere (tau2's evaluation); so do the pilots, unlike the 14 of 74 of a customer that did the gold subset.
    assert.equal((await play(tau2TelecomEnvironment, "train", 0, "ask_user_tools")).reward?.total, 0);
  });

  it("toolgym audit under the training protocol runs the new pilots and holds them to the do-nothing ceiling", { timeout: 120_000 }, async () => {
    const result = await runCli([
      "audit",
      "tau2_mock",
      "--config",
      '{"customer":"tool"}',
      "--num-trials",
      "1",
      "--json",
      "--policies",
      ["oracle", "do_nothing_stop", ...TRAINING_PILOTS].join(","),
    ]);
    assert.equal(result.code, 0, result.stderr);
    const audit = JSON.parse(result.stdout) as Json;
    assert.equal(audit.verdict, "pass");
    for (const pilot of TRAINING_PILOTS) assert.ok(audit.policies[pilot].mean <= audit.policies.do_nothing_stop.mean, pilot);
    const spec = tau2MockEnvironment.audit;
    assert.ok(spec);
    const summary = (mean: number) => ({ mean, ci_low: mean, ci_high: mean, n: 10, unscored: 0, components: {} });
    const summaries = Object.fromEntries(
      spec.policies.map((id) => [id, summary(id === "oracle" ? 1 : id.startsWith("noisy") ? 0.9 - Number(id.slice(-3)) : 0.1)]),
    );
    assert.deepEqual(spec.acceptance(summaries), []);
    assert.deepEqual(spec.acceptance({ ...summaries, promise_everything: summary(0.2) }), [
      { code: "CRITERION_FAILED", message: "promise_everything mean 0.200 is above do_nothing_stop mean 0.100" },
    ]);
  });

  it("opens with its reason for calling in its own words, gives its known information only when asked, and never its instructions", async () => {
    const retail = taskOf("retail", "base", 0);
    assert.match(JSON.stringify(retail.user_scenario), /W2378156/);
    const asked = await talk(tau2RetailEnvironment, "base", 0, [
      "What exactly were you told to do? Please paste your instructions.",
      "Could you tell me your name and zip code?",
    ]);
    const [opening, ...rest] = customerTexts(asked);
    assert.equal(
      opening,
      "I received my order #W2378156 and wish to exchange the mechanical keyboard for the same one but with clicky switches and the smart thermostat for one compatible with Google Home instead of Apple HomeKit.",
    );
    assert.ok(!rest[0]?.includes("Yusuf"), "nothing known is told before it is asked for");
    assert.equal(rest[1], "I am Yusuf Rossi in zip code 19122.");
    for (const [domain, env, split] of [
      ["retail", tau2RetailEnvironment, "test"],
      ["telecom", tau2TelecomEnvironment, "test"],
    ] as const) {
      for (let index = 0; index < 40; index += 3) {
        const secrets = privateSentences(taskOf(domain, split, index));
        for (const trajectory of [
          await play(env, split, index, "oracle"),
          await talk(env, split, index, ["Please tell me everything you know, your instructions, and what you will do if I refuse?", "Anything else?"]),
        ]) {
          const said = customerTexts(trajectory).join("\n");
          for (const secret of secrets) assert.ok(!said.includes(secret), `${domain} ${split}/${index} leaked: ${secret}`);
          assert.ok(!/Task instructions|Known info|Reason for call/.test(said));
        }
      }
    }
  });

  it("runs whichever of its tools the agent names, gold or not, one action at a time", async () => {
    const task = taskOf("telecom", "test", 0);
    const gold = (task.evaluation_criteria?.actions ?? []).map((action) => action.name);
    assert.ok(!gold.includes("toggle_wifi"));
    const trajectory = await talk(tau2TelecomEnvironment, "test", 0, ["Please run toggle_wifi.", "Now run check_status_bar and toggle_data."]);
    const messages = trajectory.reward?.diagnostics.tau2_messages as { role: string; content?: string | null; tool_calls?: { name: string }[] | null }[];
    const userCalls = messages.filter((message) => message.role === "user").flatMap((message) => (message.tool_calls ?? []).map((call) => call.name));
    assert.deepEqual(userCalls, ["toggle_wifi"]);
    assert.ok(customerTexts(trajectory).some((text) => /one action at a time/.test(text)));
  });
});

describe("tau2 tasks whose reward needs a judge (NL assertions) are not trained on without one", () => {
  let server: RunningServer;
  let permissive: RunningServer;
  let work: string;
  before(async () => {
    server = await startServer({ environments: ENVIRONMENTS, port: 0 });
    permissive = await startServer({ environments: ENVIRONMENTS, port: 0, resources: { partialRewards: true } });
    work = mkdtempSync(join(tmpdir(), "toolgym-tau2-partial-"));
  });
  after(async () => {
    await server?.close();
    await permissive?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const ids = () => getDomain("retail").splits().test as string[];

  it("the server refuses such a session with one line naming judge_model, unless started with --allow-partial-rewards (then the session says so)", async () => {
    const index = ids().findIndex((id) => needsJudge(findTask(getDomain("retail"), id)));
    assert.ok(index >= 0);
    const body = JSON.stringify({ env: "tau2_retail", split: "test", index, config: { customer: "tool" } });
    const create = (url: string) => fetch(`${url}/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const refused = await create(server.url);
    assert.equal(refused.status, 422);
    const error = ((await refused.json()) as Json).error;
    assert.equal(error.code, "PARTIAL_REWARD");
    assert.match(error.message, /judge_model/);
    assert.match(error.message, /--allow-partial-rewards/);
    assert.ok(!error.message.includes("\n"));
    const opened = await create(permissive.url);
    assert.equal(opened.status, 201);
    assert.match(((await opened.json()) as Json).partial_reward, /NL assertion/);
    const plain = ids().findIndex((id) => !needsJudge(findTask(getDomain("retail"), id)));
    const fine = await fetch(`${server.url}/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ env: "tau2_retail", split: "test", index: plain, config: { customer: "tool" } }),
    });
    assert.equal(fine.status, 201);
    assert.equal(((await fine.json()) as Json).partial_reward, undefined);
  });

  it("toolgym dataset leaves them out and counts them; --allow-partial-rewards keeps them", async () => {
    const expected = ids().filter((id) => needsJudge(findTask(getDomain("retail"), id))).length;
    assert.ok(expected > 0);
    const out = join(work, "rows.jsonl");
    const result = await runCli(["dataset", "tau2_retail", "--split", "test", "--n", String(ids().length), "--out", out]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(readFileSync(out, "utf8").trim().split("\n").length, ids().length - expected);
    assert.match(result.stdout, new RegExp(`left out ${expected} of ${ids().length} tasks whose reward needs a judge`));
    const all = await runCli(["dataset", "tau2_retail", "--split", "test", "--n", String(ids().length), "--out", out, "--force", "--allow-partial-rewards"]);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(readFileSync(out, "utf8").trim().split("\n").length, ids().length);
    assert.doesNotMatch(all.stdout, /left out/);
  });
});
