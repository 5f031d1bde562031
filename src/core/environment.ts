import type { z } from "zod";
import type { JsonValue, Message } from "./messages.ts";
import type { RewardBreakdown } from "./reward.ts";
import type { ToolResult, ToolSpec } from "./tools.ts";

/**
 * How an agent talks to an environment.
 * - `tools`: the agent answers with tool calls; each is executed through `Episode.call`.
 * - `text`: the agent answers in plain text; the reply goes to `Episode.reply`, whose result comes back
 *   as the next user message (BALROG-style benchmarks, QA with the context in the prompt).
 */
export type Protocol = "tools" | "text";

export interface TaskAddress<Config> {
  split: string;
  seed: number;
  index: number;
  config: Config;
}

/** One running episode: mutable state behind a small interface. Pure in-memory work, no I/O. */
export interface Episode {
  readonly protocol: Protocol;
  /** The prompt messages (system + user) the agent starts from. */
  readonly messages: Message[];
  /** Tool schemas offered to the agent (empty for pure text protocols). */
  readonly tools: ToolSpec[];
  /** Executes one tool call. `args` is the parsed JSON arguments (any shape; validated here). */
  call(name: string, args: unknown): ToolResult;
  /** Text protocol: handles one plain-text reply. Tool environments may omit it. */
  reply?(text: string): ToolResult;
  /**
   * Optional: the messages the agent sees this turn, built from the full log (`messages` here is the
   * trajectory so far). For harnesses that rebuild one prompt per step with a history window (BALROG).
   * Without it the agent sees the log itself. The trajectory always stores the full log.
   */
  view?(messages: Message[]): Message[];
  /** True once the episode has terminated (finish called, goal reached, steps exhausted...). */
  readonly done: boolean;
  /** Reward breakdown of the episode as it stands; `formatErrors` is the rollout loop's count (malformed JSON included). */
  reward(options: { turnsUsed: number; maxTurns: number; endedBy: TerminationReason; formatErrors?: number }): RewardBreakdown;
  /** Extra diagnostics recorded in the trajectory (counts, collateral mutations...). */
  diagnostics?(): Record<string, JsonValue>;
}

export type TerminationReason = "finished" | "env_done" | "max_turns" | "no_tool_call" | "errored";

/**
 * The contract every environment implements. `generate` and `publicView` are pure functions of their
 * arguments; the task object may hold hidden solution data, `publicView` never does.
 */
export interface EnvironmentDefinition<Config = unknown, Task = unknown> {
  id: string;
  version: string;
  description: string;
  protocol: Protocol;
  splits: readonly string[];
  defaultSplit: string;
  /** zod schema with defaults; unknown keys are rejected. */
  configSchema: z.ZodType<Config>;
  /** Default maximum number of agent turns for this environment (may depend on the task). */
  maxTurns(task: Task): number;
  generate(address: TaskAddress<Config>): Task;
  /** The task as an agent may see it: no hidden plan, answers or oracle data. */
  publicView(task: Task): JsonValue;
  /** The hidden solution (for `toolgym show --solution` and debugging). */
  solution(task: Task): JsonValue;
  start(task: Task): Episode;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyEnvironment = EnvironmentDefinition<any, any>;

export function defineEnvironment<Config, Task>(definition: EnvironmentDefinition<Config, Task>): EnvironmentDefinition<Config, Task> {
  return definition;
}
