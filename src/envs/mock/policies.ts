import type { MockTask } from "./index.ts";
import { createScriptedAgent, lastToolResult, type ScriptedPolicy } from "../_kit/scripted.ts";

export const mockPolicies: ScriptedPolicy<MockTask>[] = [
  {
    id: "oracle",
    kind: "genuine",
    description: "Looks the key up, then answers with the value it read.",
    create: ({ task }) =>
      createScriptedAgent("oracle", ({ turn, messages }) => {
        if (turn === 1) return { calls: [{ name: "lookup", arguments: { key: task.key } }] };
        const result = lastToolResult(messages) as { value?: string };
        return { calls: [{ name: "finish", arguments: { answer: result?.value ?? "" } }] };
      }),
  },
  {
    id: "reckless_guess",
    kind: "pilot",
    description: "Answers at once with a guess.",
    create: ({ random }) =>
      createScriptedAgent("reckless_guess", () => ({ calls: [{ name: "finish", arguments: { answer: String(random.integer(100, 999)) } }] })),
  },
];
