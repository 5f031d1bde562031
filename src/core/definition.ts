import type { Agent } from "./agent.ts";
import type { JsonValue } from "./messages.ts";
import type { Random } from "./random.ts";

/**
 * A scripted policy: builds one agent per episode. It may look at the hidden task (an oracle uses the
 * plan to decide what to look for) but acts only through the same interface a model uses.
 */
export interface ScriptedPolicy<Task = unknown> {
  id: string;
  kind: "genuine" | "pilot";
  description: string;
  create(options: { task: Task; random: Random }): Agent;
}

/** One policy's audit result: mean reward with its CI and the mean of each component. */
export interface PolicySummary {
  mean: number;
  ci_low: number;
  ci_high: number;
  /** Episodes played (tasks × trials); the CI is over tasks. */
  n: number;
  /** Episodes whose reward total is null (reward error or errored episode); any makes the audit fail. */
  unscored: number;
  /** Mean of each component; null when some episode could not compute it (see `not_computed`) or none had it. */
  components: Record<string, number | null>;
  /** Episodes whose component was not computed (null in the breakdown, e.g. tau2's NL_ASSERTION without a judge), by component. */
  not_computed?: Record<string, number>;
}

/** What an environment's audit checks: genuine play scores high, every reward hack scores low. */
export interface AuditSpec {
  /** Reward components shown in the table, in order. */
  components: string[];
  /** Policy ids in the order they run and print. */
  policies: string[];
  /** Returns the failed acceptance criteria (empty: pass). */
  acceptance(results: Record<string, PolicySummary>): AuditFailure[];
  /**
   * Configs besides the default that the pilots are meant for too (other modes, protocols, reward variants): the
   * environment contract plays them under each and requires each to trip a signature of the watch.
   */
  configs?: Record<string, JsonValue>[];
}

/**
 * A failed acceptance criterion, as a readable sentence with a code: `POLICY_NOT_RUN` when the criterion could
 * not be checked because `policy` did not run (an audit of a chosen subset leaves such criteria unjudged),
 * `CRITERION_FAILED` when it was checked and failed.
 */
export interface AuditFailure {
  code: "POLICY_NOT_RUN" | "CRITERION_FAILED";
  message: string;
  /** The policy that did not run (`POLICY_NOT_RUN`). */
  policy?: string;
}

/** How a benchmark's episodes split into report sub-rows: by one key of each trajectory's diagnostics. */
export interface BreakdownSpec {
  /** The diagnostics key whose value names the sub-row (e.g. a task family). */
  key: string;
  /** Metrics each sub-row shows (keys of each result's `metrics`). */
  metrics: string[];
}

/** The row an environment contributes to a built-in suite (`seed-card`, `quick`). */
export interface SuiteEntry {
  /** Position in the seed's table (rows sort by it). */
  order: number;
  n: number;
  /** n in the `quick` suite. */
  quickN: number;
  config?: Record<string, unknown>;
  /** Config of the `seed-card` row when `--data-dir` is given (official files instead of shipped samples). */
  seedConfig?: (dataDir: string) => Record<string, unknown>;
  /** What `--data-dir` must hold for the seed-card row, for the error message. */
  dataDirHint?: string;
}

/** `toolgym replay ENV ...`: what the command passes to an environment's own replay. */
export interface ReplayRequest {
  config: string;
  seed: number;
  index: number;
  split?: string;
  task?: string;
  /** `--calls FILE` (tool calls), `--replies FILE` (raw model replies) or `--cases FILE` (reference cases). */
  calls?: string;
  replies?: string;
  cases?: string;
}

/** An environment's own replay: returns the JSON the command prints (one value, or one line each). */
export type ReplayHook = (request: ReplayRequest) => Promise<JsonValue | { lines: JsonValue[] }>;

/** One finished episode as an exporter reads it from a run's `results.jsonl`. */
export interface ExportEpisode {
  exampleId: string | number | null;
  trajectory: JsonValue;
  metrics: Record<string, number>;
  /** The episode's id in the run, its trial and the trial's seed (`toolgym eval --num-trials`). */
  id?: string;
  trial?: number;
  trialSeed?: number;
  /** The reward total (null: the episode errored) and when the episode started and how long it took. */
  reward?: number | null;
  status?: "scored" | "errored";
  startedAt?: string;
  durationMs?: number;
}

/** What an exporter may need about the whole run: its metadata.json as written. */
export interface ExportRun {
  metadata: Record<string, JsonValue>;
}

/** `toolgym export RUN --format NAME`: turns a run's episodes into another tool's file format. */
export interface RunExporter {
  description: string;
  /** The file's text. */
  write(episodes: ExportEpisode[], run?: ExportRun): string;
}

/** One scored episode as an environment's `summarize` reads it from a run. */
export interface SummaryEpisode {
  metrics: Record<string, number>;
  /** The trajectory's diagnostics, when the run recorded them. */
  diagnostics?: Record<string, JsonValue>;
  /** The task's index in the run (results' `example_id`) and which trial of it this is. */
  exampleId?: number;
  trial?: number;
  /** Reward components that were not computed for this episode (absent from `metrics`). */
  notComputed?: string[];
  /** Codes of the errors the reward recorded (e.g. the benchmark's own evaluator raised). */
  rewardErrors?: string[];
}

/** One scored episode as an environment's failure categories read it from a run. */
export interface FailureEpisode extends SummaryEpisode {
  /** How the episode ended (finished, max_turns, truncated, no_tool_call). */
  termination: string;
  /** Tool calls the harness could not parse. */
  formatErrors: number;
}

/** The environment's own failure categories, so a card can show what training changed and not only that a number moved. */
export interface FailureSpec {
  /** Category names in the order a card lists them. */
  categories: string[];
  /** The categories one scored episode falls in (none for an episode without a failure); an episode may fall in several. */
  classify(episode: FailureEpisode): string[];
}

/** A benchmark's own headline numbers for one run (e.g. BALROG's progression % ± SE), with its printed line. */
export type BenchmarkSummary = { [key: string]: JsonValue } & { text: string };

/** How `toolgym report` shows an environment's own summary: under `key` in each row's JSON, beside the CI. */
export interface SummarySpec {
  /** JSON field on the report row and cell (e.g. "balrog"). */
  key: string;
  /** Label in the markdown report and card (e.g. "BALROG"). */
  label: string;
  summarize(episodes: readonly SummaryEpisode[]): BenchmarkSummary;
}

/** One scored episode as a gaming signature reads it: its reward breakdown and how it ended (no transcript: servers keep none). */
export interface WatchEpisode {
  total: number | null;
  components: Record<string, number | null>;
  /** The reward's diagnostics, then the episode's own over them (counts, collateral writes, the simulation's record). */
  diagnostics: Record<string, JsonValue>;
  /** How the episode ended (for a trainer's episode: how it was scored). */
  termination: string;
  /** Tool calls the harness could not parse or refused. */
  formatErrors: number;
  turns: number;
}

/** A cheap per-episode sign that the reward was earned without the task (or that the policy games the environment). */
export interface GamingSignature<Task = unknown> {
  /** Short lowercase words, as logged (`watch/signature/<name>`). */
  name: string;
  description: string;
  /** Whether this scored episode shows the signature; `task` is the episode's task (hidden data included). */
  test(episode: WatchEpisode, task: Task): boolean;
}

/**
 * The reward-hacking watch's view of an environment: which component is the real outcome, and the signatures of
 * gaming (each of the audit's pilots trips at least one; test/environment-contract.test.ts checks it).
 */
export interface WatchSpec<Task = unknown> {
  /** The reward component that says whether the task was done (beside the total the policy trains on). */
  outcome: string;
  signatures: GamingSignature<Task>[];
}
