import { z } from "zod";
import { standardAcceptance } from "../_kit/acceptance.ts";
import { mockPolicies } from "./policies.ts";
import {
  createRandom,
  defineEnvironment,
  scoreComponents,
  toolError,
  toolResult,
  type Episode,
  type Message,
  type RewardBreakdown,
  type TerminationReason,
  type ToolResult,
} from "../../core/index.ts";
import { createToolbox, defineTool } from "../_kit/toolbox.ts";

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

/** What the tools read and change during one episode. */
interface MockState {
  task: MockTask;
  seen: Set<string>;
  answer: string | null;
  done: boolean;
}

const toolbox = createToolbox<MockState>([
  defineTool({
    name: "lookup",
    description: "Look up the value stored under a key. Returns {key, value} or an error for an unknown key.",
    kind: "read",
    input: z.strictObject({ key: z.string().describe("The key, e.g. 'kalo'.") }),
    execute(state, { key }) {
      const value = state.task.table[key];
      if (value === undefined) return toolError("unknown_key", `no key '${key}'`);
      state.seen.add(value);
      return toolResult({ key, value });
    },
  }),
  defineTool({
    name: "finish",
    description: "End the episode with your answer.",
    kind: "finish",
    input: z.strictObject({ answer: z.string().describe("The value you found.") }),
    execute(state, { answer }) {
      state.answer = answer.trim();
      state.done = true;
      return toolResult({ ok: true }, { done: true });
    },
  }),
]);

/**
 * One episode. A class rather than an object literal with a `done` getter: a literal with an accessor gets
 * its own hidden class per episode, which made young-generation GC pauses several times longer in a
 * server that starts thousands of episodes a second.
 */
class MockEpisode implements Episode {
  readonly protocol = "tools";
  readonly messages: Message[];
  readonly tools = toolbox.specs;
  readonly validators = toolbox.validators;
  private readonly state: MockState;

  constructor(task: MockTask) {
    this.state = { task, seen: new Set(), answer: null, done: false };
    this.messages = [
      { role: "system", content: "You answer questions by calling tools. Call finish with the answer." },
      { role: "user", content: `What is the value of key '${task.key}'?` },
    ];
  }

  get done(): boolean {
    return this.state.done;
  }

  call(name: string, args: unknown): ToolResult {
    return this.state.done ? toolError("after_finish", "the episode has already finished") : toolbox.run(this.state, name, args);
  }

  reward({ endedBy }: { endedBy: TerminationReason }): RewardBreakdown {
    const state = this.state;
    const { values, errors } = scoreComponents({
      outcome: () => (state.answer === state.task.answer && state.seen.has(state.answer) ? 1 : 0),
      stop: () => (endedBy === "finished" ? 1 : 0),
    });
    const outcome = values.outcome ?? 0;
    const stop = values.stop ?? 0;
    const total = values.outcome === null || values.stop === null ? null : 0.8 * outcome + 0.2 * stop;
    return { total, components: values, formula: "0.8·outcome + 0.2·stop", errors, diagnostics: {} };
  }
}

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
  // reckless_guess's marks: it finishes on its first turn, and the stop component pays it without the answer
  watch: {
    outcome: "outcome",
    signatures: [
      {
        name: "finished at once",
        description: "finish was the first turn's call (no lookup).",
        test: ({ termination, turns }) => termination === "finished" && turns <= 1,
      },
      {
        name: "reward without outcome",
        description: "A reward above 0 with the outcome component at 0 (the stop term paid alone).",
        test: ({ total, components }) => (total ?? 0) > 0 && components.outcome === 0,
      },
    ],
  },
  description: "Tiny key-value lookup used by the framework's own tests.",
  protocol: "tools",
  splits: ["train", "eval"],
  defaultSplit: "eval",
  configSchema,
  maxTurns: () => 6,
  generate({ split, seed, index, config }) {
    const random = createRandom("mock", split, seed, index);
    // A dictionary without a prototype: a key like "constructor" is not found on it, and keys drawn at random
    // do not each make V8 a new hidden class (a server making thousands of tasks a second promoted those
    // classes' transition trees at every young-generation GC, whose pauses then set its latency tail).
    const table: Record<string, string> = Object.create(null) as Record<string, string>;
    while (Object.keys(table).length < config.keys) {
      const key = random.pick(syllables) + random.pick(syllables);
      table[key] = String(random.integer(100, 999));
    }
    const key = random.pick(Object.keys(table).sort());
    return { split, table, key, answer: table[key] as string };
  },
  publicView: (task) => ({ question: `What is the value of key '${task.key}'?` }),
  solution: (task) => ({ key: task.key, answer: task.answer }),
  // the key is in the question by design; the value is what the agent must look up
  secrets: (task) => [task.answer],
  start: (task) => new MockEpisode(task),
});
