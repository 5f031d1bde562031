import type { Agent } from "../../../core/index.ts";
import { ACTION_NAMES } from "../constants.ts";
import type { BabyAITaskRecord } from "../index.ts";
import { MixedTrainLocalLevel } from "../level.ts";
import { createScriptedAgent, type ScriptedPolicy } from "../../_kit/scripted.ts";
import { nextAction } from "./planner.ts";

/** An agent that answers with an action string: plain text, or an `act` tool call under the tools protocol. */
function actionAgent(id: string, choose: () => string): Agent {
  return createScriptedAgent(id, ({ request }) => {
    const action = choose();
    return request.protocol === "tools" ? { calls: [{ name: "act", arguments: { action } }] } : { text: action };
  });
}

export const babyaiPolicies: ScriptedPolicy<BabyAITaskRecord>[] = [
  {
    id: "oracle",
    kind: "genuine",
    description:
      "Full-information planner: rebuilds the level from the task's seed, mirrors its own actions and follows shortest paths through the instruction's subgoals.",
    create: ({ task }) => {
      const level = new MixedTrainLocalLevel(task.task, task.num_dists);
      level.reset(task.level_seed);
      return actionAgent("oracle", () => {
        const action = nextAction(level);
        level.step(action);
        return ACTION_NAMES[action] as string;
      });
    },
  },
  {
    id: "random_actions",
    kind: "pilot",
    description: "Uniformly random valid actions.",
    create: ({ random }) => actionAgent("random_actions", () => random.pick(ACTION_NAMES)),
  },
  {
    id: "always_forward",
    kind: "pilot",
    description: "Always 'go forward'.",
    create: () => actionAgent("always_forward", () => "go forward"),
  },
  {
    id: "spin_in_place",
    kind: "pilot",
    description: "Always 'turn left'.",
    create: () => actionAgent("spin_in_place", () => "turn left"),
  },
  {
    id: "toggle_spam",
    kind: "pilot",
    description: "Always 'toggle'.",
    create: () => actionAgent("toggle_spam", () => "toggle"),
  },
  {
    id: "invalid_text",
    kind: "pilot",
    description: "Chatty replies that are never a valid action (BALROG runs its default 'go forward' each time).",
    create: () => createScriptedAgent("invalid_text", () => ({ text: "I think the best move is to go forward." })),
  },
];
