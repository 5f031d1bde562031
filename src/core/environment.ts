import type { z } from "zod";
import type { AssistantMessage, JsonValue, Message } from "./messages.ts";
import type { RewardBreakdown } from "./reward.ts";
import type { Trajectory } from "./trajectory.ts";
import type { ArgumentValidator, RejectedCall, ToolResult, ToolSpec } from "./tools.ts";
import type { AuditSpec, BreakdownSpec, FailureSpec, ReplayHook, RunExporter, ScriptedPolicy, SuiteEntry, SummarySpec, WatchSpec } from "./definition.ts";

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
  /**
   * Executes one tool call that the episode driver accepted: a tool of `validators`, with the arguments its
   * validator returned (typed as the tool's schema types them), so a tool never checks their shape again.
   * Under the `environment` argument policy (`EnvironmentDefinition.argumentPolicy`), every call, with the
   * parsed JSON arguments as the model sent them.
   */
  call(name: string, args: unknown): ToolResult;
  /**
   * One argument check per tool of `tools`, run by the episode driver before `call` (the `validate` argument
   * policy, the default). Absent: the episode takes no tool calls (a text protocol), and the driver refuses
   * every call as an unknown tool.
   */
  readonly validators?: ReadonlyMap<string, ArgumentValidator>;
  /**
   * Optional: a call the driver refused (unknown tool, invalid arguments), already counted as a format error.
   * For rules where every call costs something (BabyAI after BALROG: a step with the default action;
   * search_plan: the call budget). Returns the episode's own answer, or undefined for the driver's.
   */
  rejected?(call: RejectedCall): ToolResult | undefined;
  /**
   * Handles one plain-text reply. Text protocol: every reply. Tools protocol: a reply without tool calls
   * comes here only when `conversational` is true (a partner such as a simulated user answers it,
   * possibly over the network, hence the promise); otherwise the rollout nudges the agent to call a tool.
   */
  reply?(text: string): ToolResult | Promise<ToolResult>;
  /**
   * Optional: takes the agent's whole message (text and tool calls together), for benchmarks whose rules
   * route a message as a whole (tau2: a message with tool calls goes to the tools and keeps its text in
   * the record). When present, `runEpisode` hands every assistant message here instead of splitting it
   * into `call`s and a `reply`; a throw ends the episode as errored.
   */
  respond?(message: AssistantMessage): Promise<EpisodeResponse>;
  /**
   * Optional: messages added before the agent's first turn that need I/O (a simulated user's opening
   * request, over the network). The rollout awaits it once; a failure ends the episode as errored.
   */
  opening?(): Promise<Message[]>;
  /**
   * Optional: the messages the agent sees this turn, built from the full log (`messages` here is the
   * trajectory so far). For harnesses that rebuild one prompt per step with a history window (BALROG).
   * Without it the agent sees the log itself. The trajectory always stores the full log.
   */
  view?(messages: Message[]): Message[];
  /**
   * Optional: runs a tool whose answer needs I/O (tau2's `send_message_to_user`, answered by the
   * simulated user, possibly over the network). Returns undefined for a tool `call` runs; drivers try this
   * first when it is present.
   */
  callAsync?(name: string, args: unknown): Promise<ToolResult> | undefined;
  /**
   * Set when a trainer driving this episode through the environment server could not play all of it (a
   * partner that reads plain messages, which TRL's tool loop cannot carry): the server refuses the session
   * with this text instead of scoring conversations that never happened.
   */
  readonly trainerRefusal?: string;
  /**
   * Set when the episode's reward would leave part of its basis unscored (tau2's NL assertions without a
   * judge): a trainer would learn from a reward that is not the benchmark's. The server refuses such a
   * session with this text unless its operator allows partial rewards, and `toolgym dataset` leaves it out.
   */
  readonly partialReward?: string;
  /** True once the episode has terminated (finish called, goal reached, steps exhausted...). */
  readonly done: boolean;
  /** Tools protocol: the agent may also talk (to a simulated user) with plain-text replies. */
  readonly conversational?: boolean;
  /** True when the environment cut the episode short (its own step limit) rather than it finishing. */
  readonly truncated?: boolean;
  /**
   * Reward breakdown of the episode as it stands. `formatErrors` is the episode driver's ledger, the one count of
   * format errors (malformed JSON, unknown tools, invalid arguments, replies without a tool call...).
   */
  reward(options: { turnsUsed: number; maxTurns: number; endedBy: TerminationReason; formatErrors?: number }): RewardBreakdown | Promise<RewardBreakdown>;
  /** Extra diagnostics recorded in the trajectory (counts, collateral mutations...); `formatErrors` is the driver's ledger, as for `reward`. */
  diagnostics?(ledger?: { formatErrors: number }): Record<string, JsonValue>;
  /**
   * Optional: ends the work the episode has in flight (a simulated user's or judge's model request, which is
   * aborted) when nobody will read its answer: a server calls it when the session is deleted, expires or
   * its connection ends. Calls after it fail.
   */
  close?(): void;
}

/** What the agent sees after its whole message (`Episode.respond`). */
export interface EpisodeResponse {
  /** In order: the tool messages answering its calls, then any partner's message (a simulated user). */
  messages: Message[];
  /** One flag per tool call of the message, in order: whether the tool returned an error. */
  toolErrors: boolean[];
}

/**
 * How an episode ended: `finished` (the task's own end: finish called, goal reached, the simulated user
 * stopped), `truncated` (the environment's step limit), `max_turns` (the harness's turn limit),
 * `no_tool_call` (the agent answered without a tool call where that ends the episode, as in TRL's tool
 * loop), a model failure the server reported (`prompt_too_long`: the conversation outgrew the context;
 * `content_filter`; `reply_too_large`: a reply over the size cap), scored like a turn limit, or `errored`
 * (the infrastructure failed: the server unreachable or failing after retries; no reward).
 */
export type TerminationReason = "finished" | "truncated" | "max_turns" | "no_tool_call" | "prompt_too_long" | "content_filter" | "reply_too_large" | "errored";

export const TERMINATION_REASONS: readonly TerminationReason[] = [
  "finished",
  "truncated",
  "max_turns",
  "no_tool_call",
  "prompt_too_long",
  "content_filter",
  "reply_too_large",
  "errored",
];

/**
 * Who checks a tool call's arguments. `validate` (the default): the episode driver, with the episode's
 * `validators`, before `call` runs; refusals are answered and counted as format errors there, once.
 * `environment`: the driver hands every call to `call` with the arguments as parsed, and the environment
 * answers bad ones as its benchmark does (tau2: pydantic's coercion and Python's TypeError texts, which are
 * part of the conversation tau2 grades); an answer with `errorKind: "invalid_arguments"` is still counted.
 */
export type ArgumentPolicy = "validate" | "environment";

/**
 * Which repetition of a task an episode is (`toolgym eval --num-trials`) and the seed that repetition runs
 * with: tau2 draws one seed per trial from the run's base seed and gives it to the agent and user models.
 */
export interface EpisodeContext {
  trial: number;
  seed: number;
}

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
  /** Who checks tool-call arguments (see `ArgumentPolicy`); default `validate`. */
  argumentPolicy?: ArgumentPolicy;
  /** Default maximum number of agent turns for this environment (may depend on the task). */
  maxTurns(task: Task): number;
  /**
   * Number of distinct tasks in a split for this config when the tasks come from a fixed dataset
   * (indices past it wrap around); absent for procedurally generated environments. `toolgym eval`
   * refuses `--n` beyond it instead of silently repeating tasks.
   */
  taskCount?(address: { split: string; config: Config }): number;
  /** The index of the task a dataset names `taskId` in a split (`toolgym show --task`), undefined when the split has none. */
  taskIndex?(address: { split: string; config: Config }, taskId: string): number | undefined;
  /**
   * What a run over this split and config should record about its data (malformed records a skip-bad
   * load skipped): `runEvaluation` adds them to the run's notes (summary.json, the report, the eval
   * command's output). Environments never print them themselves.
   */
  notes?(address: { split: string; config: Config }): string[];
  generate(address: TaskAddress<Config>): Task;
  /** The task as an agent may see it: no hidden plan, answers or oracle data. */
  publicView(task: Task): JsonValue;
  /** The hidden solution (for `toolgym show --solution` and debugging). */
  solution(task: Task): JsonValue;
  /**
   * Strings that must never reach the agent (answers, hidden ids), for solutions whose other values are
   * shown by design (a mission, a name in the question). The contract kit checks them against the public
   * view and the prompt; without it, every string of `solution(task)` must be absent from the public view.
   */
  secrets?(task: Task): string[];
  /**
   * A new episode of `task`. Episodes never change their task: the audit plays every policy on one task
   * object, and a task's episodes may share what they derive from it (the contract kit checks both).
   */
  start(task: Task, context?: EpisodeContext): Episode;
  /**
   * The seed of each of `numTrials` trials of a run with base seed `baseSeed` (`toolgym eval --num-trials`),
   * for benchmarks with their own scheme (tau2 draws them from Python's random seeded with the base seed).
   * Without it toolgym's default scheme applies (src/eval/trials.ts).
   */
  trialSeeds?(baseSeed: number, numTrials: number): number[];
  /** The base seed of `toolgym eval` when `--seed` is not given (tau2: 300, its runner's default); else 0. */
  defaultSeed?: number;
  /**
   * What the benchmark's own runner sends and how it reads a model's reply, where it differs from toolgym's
   * defaults (tau2's `generate`: temperature 0.0 unless given, `tool_choice: "auto"`, `<tool_call>` text in
   * `content` kept as text). `toolgym eval --temperature`/`--recover-text-tool-calls` override them.
   */
  modelRequest?: { temperature?: number; toolChoice?: string; recoverTextToolCalls?: boolean };
  /**
   * The benchmark runner's own rule for a simulation that raised (tau2's `run_with_retry`: re-run with the
   * same seed up to 3 more times, then record an infrastructure error): how many re-runs `toolgym eval`
   * makes, and why a finished episode counts as raised (undefined: it did not).
   */
  simulationRetries?: { retries: number; raised(trajectory: Trajectory): string | undefined };
  /**
   * Config values a training dataset starts from (`toolgym dataset`; the user's config overrides them):
   * for environments whose default protocol is the benchmark's own but which train under another (tau2:
   * the customer as a tool).
   */
  trainingConfig?: Record<string, JsonValue>;
  /** Display name in reports and cards (e.g. "BALROG BabyAI"). */
  title?: string;
  /** Environments that share a kit (e.g. "tau2"); `toolgym replay FAMILY --cases` reaches them all. */
  family?: string;
  /** Scripted policies; the first genuine one is `toolgym eval`'s default agent. */
  policies?: ScriptedPolicy<Task>[];
  audit?: AuditSpec;
  /** The reward-hacking watch: the outcome component and per-episode signatures of gaming, checked on every training episode. */
  watch?: WatchSpec<Task>;
  /** Metrics a report shows (keys of each result's `metrics`); default `["reward"]`. */
  metrics?: string[];
  /** Report sub-rows by a diagnostics key. */
  breakdown?: BreakdownSpec;
  /** Failure categories from the episode's metrics and diagnostics (the pipeline card's "what changed"). */
  failures?: FailureSpec;
  /** This environment's row in the built-in `seed-card` and `quick` suites. */
  seedSuite?: SuiteEntry;
  /** `toolgym replay` for environments whose replay input is not a plain list of tool calls. */
  replay?: ReplayHook;
  /** `toolgym export RUN --format NAME` formats this environment's runs can be written as. */
  exports?: Record<string, RunExporter>;
  /** The benchmark's own summary of a run (its published formulas and printed line), shown by `toolgym report`. */
  summary?: SummarySpec;
  /**
   * `errored`: a model failure the server reports (context overflow, content filter, a reply over the cap)
   * ends the episode as errored, left out of the means, because the benchmark's own runner does so (tau2
   * records an LLM error as an infrastructure error). Default `scored`: the episode is the model's failure.
   */
  modelFailures?: "scored" | "errored";
  /**
   * `toolgym rescore`: the reward of a recorded episode by this version of the environment, from the
   * conversation as recorded (tau2 grades its message record, NL assertions through the config's judge).
   * Without it, rescore replays the recorded agent messages through a fresh episode.
   */
  rescore?(input: { task: Task; config: Config; trajectory: Trajectory; context?: EpisodeContext }): Promise<RewardBreakdown>;
  /**
   * Config keys that reach outside the process: a data file, a data directory, or a model endpoint. A server
   * lets a client name only what its operator fixed at start (`toolgym serve --data-dir`, `--model`).
   */
  externalConfig?: Record<string, "file" | "directory" | "model">;
  /** The files a parsed config makes `generate` read (none for built-in data), so a server can check them first. */
  dataFiles?(config: Config): string[];
  /** Loads what `generate` needs for this config without blocking the event loop; a server awaits it first. */
  prepare?(config: Config): Promise<void>;
  /**
   * Does the slow part of `generate` and `start` for one task off the event loop (babyai's longest level
   * searches run on a worker thread), so that they then return at once; undefined when nothing is slow.
   * A server awaits it before opening a session; a `BusyError` means too many such jobs already wait.
   */
  prepareTask?(address: TaskAddress<Config>): Promise<void> | undefined;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyEnvironment = EnvironmentDefinition<any, any>;

export function defineEnvironment<Config, Task>(definition: EnvironmentDefinition<Config, Task>): EnvironmentDefinition<Config, Task> {
  return definition;
}
