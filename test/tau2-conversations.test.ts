import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { Agent, AnyEnvironment, AssistantMessage, Message } from "../src/core/index.ts";
import { getDomain, findTask } from "../src/envs/tau2/domains.ts";
import { Tau2Episode } from "../src/envs/tau2/episode.ts";
import type { UserSimulator } from "../src/envs/tau2/user.ts";
import { userHistory } from "../src/envs/tau2/user.ts";
import { runEpisode } from "../src/rollout/run-episode.ts";
import { tau2MockEnvironment } from "../src/envs/tau2_mock/index.ts";
import { tau2TelecomEnvironment } from "../src/envs/tau2_telecom/index.ts";

/** Scripted moves, and what tau2's own Orchestrator did with them (fixtures/tau2/conversations, made by tau2's Python). */
interface Move {
  content?: string | null;
  tool_calls?: { id: string; name: string; arguments: Record<string, unknown> }[];
}
interface Scenario {
  name: string;
  domain: string;
  task_id: string;
  max_steps: number;
  max_errors: number;
  user: Move[];
  agent: Move[];
}
interface Reference {
  name: string;
  raised?: string;
  termination_reason?: string;
  step_count?: number;
  num_errors?: number;
  reward?: number;
  messages?: Record<string, unknown>[];
  agent_inputs: { role: string; content: string | null }[][];
  user_inputs: { role: string; content: string | null }[][];
  agent_history: Record<string, unknown>[] | null;
  user_history: Record<string, unknown>[] | null;
}

const folder = join(import.meta.dirname, "fixtures/tau2/conversations");
const scenarios = JSON.parse(readFileSync(join(folder, "scenarios.json"), "utf8")) as Scenario[];
const references = new Map((JSON.parse(readFileSync(join(folder, "reference.json"), "utf8")).results as Reference[]).map((item) => [item.name, item]));
const environments: Record<string, AnyEnvironment> = { mock: tau2MockEnvironment, telecom: tau2TelecomEnvironment };
const FALLBACK = "Is there anything else I can help you with?";

/** The tau2 script's agent: one move per turn; logs what reached it since its last message. */
function scriptedAgent(moves: Move[], inputs: { role: string; content: string | null }[][]): Agent {
  let turn = 0;
  return {
    id: "scripted-moves",
    async act(request) {
      const lastOwn = request.messages.findLastIndex((message) => message.role === "assistant");
      inputs.push(request.messages.slice(lastOwn + 1).map((message) => ({ role: message.role, content: (message as { content: string | null }).content })));
      const move = moves[turn++] ?? { content: FALLBACK };
      const message: AssistantMessage = {
        role: "assistant",
        content: move.content ?? null,
        ...(move.tool_calls
          ? {
              tool_calls: move.tool_calls.map((call) => ({
                id: call.id,
                type: "function" as const,
                function: { name: call.name, arguments: JSON.stringify(call.arguments) },
              })),
            }
          : {}),
      };
      return { message };
    },
  };
}

function scriptedUser(moves: Move[], inputs: { role: string; content: string | null }[][]): UserSimulator {
  let turn = 0;
  return {
    async respond(event) {
      inputs.push(
        "agentText" in event
          ? [{ role: "assistant", content: event.agentText }]
          : event.toolResults.map((result) => ({ role: "tool", content: result.content })),
      );
      const move = moves[turn++];
      assert.ok(move, "the scripted user ran out of moves");
      return { text: move.content ?? null, calls: (move.tool_calls ?? []).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })) };
    },
  };
}

/** An API message as tau2's reference logs it: role, content, tool calls with parsed arguments, the tool message's id. */
function apiView(message: Message): Record<string, unknown> {
  const entry: Record<string, unknown> = { role: message.role, content: message.content };
  if (message.role === "assistant" && message.tool_calls?.length)
    entry.tool_calls = message.tool_calls.map((call) => ({ id: call.id, name: call.function.name, arguments: JSON.parse(call.function.arguments) }));
  if (message.role === "tool") entry.id = message.tool_call_id;
  return entry;
}

async function play(scenario: Scenario) {
  const env = environments[scenario.domain] as AnyEnvironment;
  const config = env.configSchema.parse({ max_steps: scenario.max_steps, max_errors: scenario.max_errors });
  const split = "small" in getDomain(scenario.domain).splits() ? "small" : "base";
  const ids = getDomain(scenario.domain).splits()[split] as string[];
  const index = ids.indexOf(scenario.task_id);
  assert.ok(index >= 0, `${scenario.task_id} is in ${split}`);
  const task = env.generate({ split, seed: 0, index, config });
  const agentInputs: { role: string; content: string | null }[][] = [];
  const userInputs: { role: string; content: string | null }[][] = [];
  let episode: Tau2Episode | undefined;
  const withScriptedUser: AnyEnvironment = {
    ...env,
    start(envTask) {
      const started = env.start(envTask) as Tau2Episode;
      episode = new Tau2Episode({
        ...(started as unknown as { options: ConstructorParameters<typeof Tau2Episode>[0] }).options,
        user: scriptedUser(scenario.user, userInputs),
      });
      return episode;
    },
  };
  const trajectory = await runEpisode({
    env: withScriptedUser,
    split,
    seed: 0,
    index,
    config,
    task,
    agent: scriptedAgent(scenario.agent, agentInputs),
    maxTurns: 1000,
  });
  return { trajectory, episode: episode as Tau2Episode, agentInputs, userInputs };
}

describe("tau2 conversation rules against tau2's own Orchestrator", () => {
  for (const scenario of scenarios) {
    const reference = references.get(scenario.name) as Reference;
    it(scenario.name, async () => {
      assert.ok(reference, "a reference for every scenario");
      const { trajectory, episode, agentInputs, userInputs } = await play(scenario);
      const diagnostics = trajectory.diagnostics as Record<string, unknown>;
      if (reference.raised) {
        // tau2's runner retries a raising simulation, then records infrastructure_error (excluded from its metrics).
        assert.equal(trajectory.termination, "errored");
        assert.equal(trajectory.reward, null);
        assert.equal(diagnostics.tau2_termination, "infrastructure_error");
        return;
      }
      const messages = episode.trajectory.map((message) =>
        message.role === "tool"
          ? { role: "tool", content: message.content, id: message.id, requestor: message.requestor, error: message.error }
          : {
              role: message.role,
              content: message.content ?? null,
              tool_calls: message.tool_calls
                ? message.tool_calls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments, requestor: call.requestor ?? "assistant" }))
                : null,
            },
      );
      assert.deepEqual(messages, reference.messages);
      assert.equal(trajectory.reward?.diagnostics.tau2_termination, reference.termination_reason);
      assert.equal(diagnostics.steps, reference.step_count, "steps, counted per message as tau2 counts them");
      assert.equal(diagnostics.tool_errors, reference.num_errors);
      assert.equal(trajectory.reward?.total, reference.reward);
      assert.deepEqual(agentInputs, reference.agent_inputs, "what reached the agent");
      assert.deepEqual(userInputs, reference.user_inputs, "what reached the user");
      assert.deepEqual(
        trajectory.messages.slice(1, 1 + (reference.agent_history?.length ?? 0)).map(apiView),
        reference.agent_history,
        "the agent's starting history",
      );
      const history = findTask(getDomain(scenario.domain), scenario.task_id).initial_state?.message_history ?? [];
      if (reference.user_history)
        assert.deepEqual(userHistory(history).map(apiView), reference.user_history, "the user simulator's starting history (roles flipped)");
      // The record tau2-eval exports: tau2's Message JSON, in order.
      const exported = trajectory.reward?.diagnostics.tau2_messages as Record<string, unknown>[];
      assert.equal(exported.length, messages.length);
      exported.forEach((message, position) => assert.equal(message.turn_idx, position));
    });
  }

  it("malformed tool-call JSON fails the simulation as tau2's json.loads does (infrastructure_error)", async () => {
    const env = tau2MockEnvironment;
    const config = env.configSchema.parse({});
    const task = env.generate({ split: "base", seed: 0, index: 0, config });
    const agent: Agent = {
      id: "broken",
      async act() {
        return {
          message: { role: "assistant", content: null, tool_calls: [{ id: "x", type: "function", function: { name: "get_users", arguments: "{not json" } }] },
        };
      },
    };
    const trajectory = await runEpisode({ env, split: "base", seed: 0, index: 0, config, task, agent });
    assert.equal(trajectory.termination, "errored");
    assert.equal(trajectory.diagnostics.tau2_termination, "infrastructure_error");
    assert.match(trajectory.errors[0]?.message ?? "", /not JSON/);
    assert.ok(Array.isArray(trajectory.diagnostics.tau2_messages), "an errored run still carries tau2's message list");
  });

  it("the agent's ###STOP### ends the run only when the config opts in (agent_stop)", async () => {
    const env = tau2MockEnvironment;
    const config = env.configSchema.parse({ agent_stop: true });
    const task = env.generate({ split: "base", seed: 0, index: 0, config });
    const agent = scriptedAgent([{ content: "Bye. ###STOP###" }], []);
    const trajectory = await runEpisode({ env, split: "base", seed: 0, index: 0, config, task, agent });
    assert.equal(trajectory.reward?.diagnostics.tau2_termination, "agent_stop");
    assert.equal(trajectory.turns, 1);
  });
});
