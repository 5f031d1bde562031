import { z } from "zod";
import { standardAcceptance } from "../_kit/acceptance.ts";
import { mockPolicies } from "./policies.ts";
import { createRandom, defineEnvironment, defineTool, scoreComponents, toolError, toolResult, type Episode } from "../../core/index.ts";

/**
 * `mock`: a tiny two-tool environment the framework tests itself with (harness, server, reports).
 * A table of keys and values; the task asks for the value of one key.
 */
const configSchema = z.strictObject({ keys: z.number().int().min(2).max(50).default(5) });
export type MockConfig = z.infer<typeof configSchema>;
export interface MockTask {
  split: string;
  table: Record<string, string>;
  key: string;
  answer: string;
}

const syllables = ["ka", "lo", "mi", "ru", "te", "vo", "za", "ne", "pi", "shu"];

const tools = [
  defineTool({
    name: "lookup",
    description: "Look up the value stored under a key. Returns {key, value} or an error for an unknown key.",
    parameters: {
      type: "object",
      properties: { key: { type: "string", description: "The key, e.g. 'kalo'." } },
      required: ["key"],
      additionalProperties: false,
    },
  }),
  defineTool({
    name: "finish",
    description: "End the episode with your answer.",
    parameters: {
      type: "object",
      properties: { answer: { type: "string", description: "The value you found." } },
      required: ["answer"],
      additionalProperties: false,
    },
  }),
];

export const mockEnvironment = defineEnvironment<MockConfig, MockTask>({
  id: "mock",
  version: "1",
  title: "mock",
  policies: mockPolicies,
  audit: {
    components: ["outcome", "stop"],
    policies: ["oracle", "reckless_guess"],
    acceptance: standardAcceptance({ oracle: "oracle", oracleMin: 0.95, pilots: ["reckless_guess"], pilotMax: 0.25 }),
  },
  description: "Tiny key-value lookup used by the framework's own tests.",
  protocol: "tools",
  splits: ["train", "eval"],
  defaultSplit: "eval",
  configSchema,
  maxTurns: () => 6,
  generate({ split, seed, index, config }) {
    const random = createRandom("mock", split, seed, index);
    const table: Record<string, string> = {};
    while (Object.keys(table).length < config.keys) {
      const key = random.pick(syllables) + random.pick(syllables);
      table[key] = String(random.integer(100, 999));
    }
    const key = random.pick(Object.keys(table).sort());
    return { split, table, key, answer: table[key] as string };
  },
  publicView: (task) => ({ question: `What is the value of key '${task.key}'?` }),
  solution: (task) => ({ key: task.key, answer: task.answer }),
  start(task): Episode {
    const seen = new Set<string>();
    let answer: string | null = null;
    let done = false;
    return {
      protocol: "tools",
      messages: [
        { role: "system", content: "You answer questions by calling tools. Call finish with the answer." },
        { role: "user", content: `What is the value of key '${task.key}'?` },
      ],
      tools,
      get done() {
        return done;
      },
      call(name, args) {
        const input = (args ?? {}) as Record<string, unknown>;
        if (name === "lookup") {
          if (typeof input.key !== "string") return toolError("invalid_arguments", "lookup needs {key: string}");
          const value = task.table[input.key];
          if (value === undefined) return toolError("unknown_key", `no key '${input.key}'`);
          seen.add(value);
          return toolResult({ key: input.key, value });
        }
        if (name === "finish") {
          if (typeof input.answer !== "string") return toolError("invalid_arguments", "finish needs {answer: string}");
          answer = input.answer.trim();
          done = true;
          return toolResult({ ok: true }, { done: true });
        }
        return toolError("unknown_tool", `unknown tool '${name}'; available: lookup, finish`);
      },
      reward({ endedBy }) {
        const { values, errors } = scoreComponents({
          outcome: () => (answer === task.answer && seen.has(answer) ? 1 : 0),
          stop: () => (endedBy === "finished" ? 1 : 0),
        });
        const outcome = values.outcome ?? 0;
        const stop = values.stop ?? 0;
        const total = values.outcome === null || values.stop === null ? null : 0.8 * outcome + 0.2 * stop;
        return { total, components: values, formula: "0.8·outcome + 0.2·stop", errors, diagnostics: {} };
      },
    };
  },
});
