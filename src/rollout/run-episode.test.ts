import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { ProviderError, defineEnvironment, toolResult, type Agent, type AgentTurn, type Episode } from "../core/index.ts";
import { mockEnvironment } from "../envs/mock/index.ts";
import { SessionStore } from "../server/session-store.ts";
import { runEpisode } from "./run-episode.ts";

function agentFrom(turns: AgentTurn[] | (() => never)): Agent {
  let position = 0;
  return {
    id: "test",
    async act() {
      if (typeof turns === "function") return turns();
      const turn = turns[Math.min(position, turns.length - 1)] as AgentTurn;
      position++;
      return turn;
    },
  };
}

const config = { keys: 5 };
const task = mockEnvironment.generate({ split: "eval", seed: 1, index: 0, config });
const call = (name: string, args: string, id = "c1"): AgentTurn => ({
  message: { role: "assistant", content: "", tool_calls: [{ id, type: "function", function: { name, arguments: args } }] },
});

describe("runEpisode", () => {
  it("runs tool calls to a finished, scored episode", async () => {
    const agent = agentFrom([call("lookup", JSON.stringify({ key: task.key })), call("finish", JSON.stringify({ answer: task.answer }))]);
    const trajectory = await runEpisode({ env: mockEnvironment, split: "eval", seed: 1, index: 0, config, agent });
    assert.equal(trajectory.termination, "finished");
    assert.equal(trajectory.turns, 2);
    assert.equal(trajectory.reward?.total, 1);
    assert.equal(trajectory.formatErrors.count, 0);
    assert.deepEqual(
      trajectory.steps.map((step) => step.name),
      ["lookup", "finish"],
    );
    assert.equal(trajectory.messages.filter((message) => message.role === "tool").length, 2);
  });

  it("turns invalid JSON arguments and unknown tools into readable tool errors and counts them", async () => {
    const agent = agentFrom([call("lookup", "{key: oops"), call("teleport", "{}"), call("finish", JSON.stringify({ answer: "x" }))]);
    const trajectory = await runEpisode({ env: mockEnvironment, split: "eval", seed: 1, index: 0, config, agent });
    assert.equal(trajectory.formatErrors.byKind.invalid_json_arguments, 1);
    assert.equal(trajectory.formatErrors.byKind.unknown_tool, 1);
    const [first, second] = trajectory.steps;
    assert.equal(first?.isError, true);
    assert.match(first?.result ?? "", /not valid JSON/);
    assert.equal(second?.isError, true);
    assert.match(second?.result ?? "", /unknown tool 'teleport'/);
    assert.equal(trajectory.termination, "finished");
  });

  it("nudges after a reply without a tool call, or ends the episode when asked", async () => {
    const text: AgentTurn = { message: { role: "assistant", content: "I think it is 5" } };
    const nudged = await runEpisode({ env: mockEnvironment, split: "eval", seed: 1, index: 0, config, agent: agentFrom([text]), maxTurns: 3 });
    assert.equal(nudged.termination, "max_turns");
    assert.equal(nudged.formatErrors.byKind.no_tool_call, 3);
    assert.equal(nudged.messages.filter((message) => message.role === "user").length, 1 + 3);
    const ended = await runEpisode({ env: mockEnvironment, split: "eval", seed: 1, index: 0, config, agent: agentFrom([text]), onNoToolCall: "end" });
    assert.equal(ended.termination, "no_tool_call");
    assert.equal(ended.turns, 1);
    assert.notEqual(ended.reward, null);
  });

  it("records a provider failure as an errored episode without a reward", async () => {
    const agent = agentFrom(() => {
      throw new ProviderError({ message: "server returned 503 five times", status: 503, retryable: true });
    });
    const trajectory = await runEpisode({ env: mockEnvironment, split: "eval", seed: 1, index: 0, config, agent });
    assert.equal(trajectory.termination, "errored");
    assert.equal(trajectory.reward, null);
    assert.equal(trajectory.errors[0]?.boundary, "provider");
    assert.match(trajectory.errors[0]?.message ?? "", /503/);
  });

  it("does not execute calls made after finish in the same turn", async () => {
    const turn: AgentTurn = {
      message: {
        role: "assistant",
        content: "",
        tool_calls: [
          { id: "a", type: "function", function: { name: "finish", arguments: JSON.stringify({ answer: "1" }) } },
          { id: "b", type: "function", function: { name: "lookup", arguments: JSON.stringify({ key: task.key }) } },
        ],
      },
    };
    const trajectory = await runEpisode({ env: mockEnvironment, split: "eval", seed: 1, index: 0, config, agent: agentFrom([turn]) });
    assert.equal(trajectory.steps[1]?.errorKind, "after_finish");
    assert.equal(trajectory.messages.filter((message) => message.role === "tool").length, 2);
  });

  it("a server session and runEpisode score the same calls the same way (one driver)", async () => {
    const calls = [
      call("lookup", JSON.stringify({ key: "nope" })),
      call("lookup", JSON.stringify({ key: task.key })),
      call("finish", JSON.stringify({ answer: task.answer })),
    ];
    const trajectory = await runEpisode({ env: mockEnvironment, split: "eval", seed: 1, index: 0, config, agent: agentFrom(calls) });
    const store = new SessionStore({ environments: { mock: mockEnvironment }, maxSessions: 4, idleMilliseconds: 60_000 });
    const session = store.create({ env: "mock", split: "eval", seed: 1, index: 0, config });
    for (const turn of calls) {
      const toolCall = turn.message.tool_calls?.[0];
      store.call(session.id, toolCall?.function.name, JSON.parse(toolCall?.function.arguments ?? "{}"));
    }
    const served = await store.reward(session.id);
    assert.equal(served.ended_by, "finished");
    assert.deepEqual({ total: served.total, components: served.components }, { total: trajectory.reward?.total, components: trajectory.reward?.components });
    assert.deepEqual(trajectory.reward?.components, { outcome: 1, stop: 1 });
  });

  it("a server session keeps no transcript (the trainer holds it), yet counts format errors for the reward", async () => {
    const store = new SessionStore({ environments: { mock: mockEnvironment }, maxSessions: 4, idleMilliseconds: 60_000 });
    const session = store.create({ env: "mock", split: "eval", seed: 1, index: 0, config, max_turns: 2_000 });
    const promptLength = session.driver.messages.length;
    for (let call = 0; call < 1_000; call++) store.call(session.id, "lookup", { key: task.key });
    store.call(session.id, "teleport", {});
    assert.equal(session.driver.steps.length, 0);
    assert.equal(session.driver.messages.length, promptLength);
    assert.deepEqual(
      session.driver.formatErrors.map((error) => error.kind),
      ["unknown_tool"],
    );
    assert.equal(session.calls, 1_001);
    // The agent loop's episodes still record every step and tool message.
    const trajectory = await runEpisode({
      env: mockEnvironment,
      split: "eval",
      seed: 1,
      index: 0,
      config,
      agent: agentFrom([call("lookup", JSON.stringify({ key: task.key })), call("finish", JSON.stringify({ answer: task.answer }))]),
    });
    assert.equal(trajectory.steps.length, 2);
  });

  it("routes a conversational environment's text replies to its partner and ends when the partner stops", async () => {
    const chat = defineEnvironment<{ turns: number }, { turns: number }>({
      id: "chat",
      version: "1",
      description: "A partner that answers twice, then stops.",
      protocol: "tools",
      splits: ["eval"],
      defaultSplit: "eval",
      configSchema: z.strictObject({ turns: z.number().default(2) }) as unknown as z.ZodType<{ turns: number }>,
      maxTurns: () => 10,
      generate: ({ config }) => ({ turns: config.turns }),
      publicView: () => ({}),
      solution: () => ({}),
      start(task): Episode {
        let heard = 0;
        return {
          protocol: "tools",
          conversational: true,
          messages: [{ role: "user", content: "hello" }],
          tools: [],
          get done() {
            return heard >= task.turns;
          },
          call: () => toolResult({ ok: true }),
          async reply(text) {
            heard++;
            return { content: `you said: ${text}`, isError: false, done: heard >= task.turns };
          },
          reward: async ({ endedBy }) => ({ total: endedBy === "finished" ? 1 : 0, components: {}, formula: "1 if finished", errors: [], diagnostics: {} }),
        };
      },
    });
    const talk: AgentTurn = { message: { role: "assistant", content: "hi there" } };
    const trajectory = await runEpisode({ env: chat, split: "eval", seed: 0, index: 0, config: { turns: 2 }, agent: agentFrom([talk]) });
    assert.equal(trajectory.termination, "finished");
    assert.equal(trajectory.turns, 2);
    assert.equal(trajectory.formatErrors.count, 0);
    assert.deepEqual(
      trajectory.messages.map((message) => `${message.role}:${message.content}`),
      ["user:hello", "assistant:hi there", "user:you said: hi there", "assistant:hi there", "user:you said: hi there"],
    );
    assert.equal(trajectory.reward?.total, 1);
  });
});
