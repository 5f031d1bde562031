import type { AnyEnvironment, Message, RewardBreakdown, ServerError, TerminationReason } from "../core/index.ts";
import type { EpisodeWatch } from "../audit/signatures.ts";
import type { EpisodeDriver } from "../rollout/episode-driver.ts";

/** The shapes the session store keeps and answers (session-store.ts), apart from its logic. */

/** Where a session's task comes from; the same address always rebuilds the same task. */
export interface SessionAddress {
  env: string;
  split?: string;
  seed?: number;
  index?: number;
  /** An object, or JSON text (dataset rows carry the config as a string). */
  config?: unknown;
  /** The episode's turn limit instead of the environment's own for the task (as `toolgym eval --max-turns`). */
  max_turns?: number;
}

export interface Session {
  id: string;
  env: AnyEnvironment;
  split: string;
  seed: number;
  index: number;
  /** The same episode driver `runEpisode` uses; the trainer plays the agent. */
  driver: EpisodeDriver;
  maxTurns: number;
  calls: number;
  lastUsed: number;
  /** The last tool call's sequence number and what it answered (an outcome or the error it threw), for retries. */
  lastSequence: number;
  lastReply?: CallOutcome | ServerError | Promise<CallOutcome>;
  /** A call answered asynchronously (a simulated user's reply) that has not finished; the next waits for it. */
  pending?: Promise<CallOutcome>;
  /** What happened before the agent's first turn (a simulated user's first message), once `openConversation` has run. */
  opening?: Message[];
  /** Its environment's entry in the store's `counters.byEnv`, kept here so a call does not look it up. */
  envCounters: EnvCounters;
  /** Its task's entry in the store's shared tasks. */
  task: SharedTask;
  /** The client that opened it (its token), for the per-client quota. */
  client: string;
  /** Why its reward is partial, when the operator allowed it (`Episode.partialReward`); sent with the session. */
  partialReward?: string;
}

/** A task and how many open sessions play it. */
export interface SharedTask {
  key: string;
  task: unknown;
  sessions: number;
}

export interface SessionStoreOptions {
  environments: Record<string, AnyEnvironment>;
  /** Refuse new sessions beyond this many open ones (429 MAX_SESSIONS). */
  maxSessions: number;
  /** Refuse a client's new sessions beyond this many of its own (429 CLIENT_SESSIONS); default maxSessions. */
  maxSessionsPerClient?: number;
  /** Sessions unused for this long are closed by `reapIdle`. */
  idleMilliseconds: number;
  /** Prepended to every session id; `toolgym serve --workers` routes requests to the worker named by it. */
  idPrefix?: string;
  /** Open sessions whose episode's reward is partial (`Episode.partialReward`) instead of refusing them. */
  allowPartialRewards?: boolean;
  now?: () => number;
}

export interface EnvCounters {
  sessions: number;
  toolCalls: number;
  toolErrors: number;
  rewards: number;
  rewardSum: number;
}

/** Server-side counters; tests and `GET /stats` read them to prove what went through the server. */
export interface ServerCounters {
  sessionsCreated: number;
  sessionsClosed: number;
  sessionsReaped: number;
  toolCalls: number;
  toolErrors: number;
  /** Tool calls answered from the stored reply because their sequence number repeated (a client retry). */
  repeatedCalls: number;
  rewards: number;
  byEnv: Record<string, EnvCounters>;
}

export interface CallOutcome {
  content: string;
  is_error: boolean;
  error_kind?: string;
  done: boolean;
  calls: number;
}

export interface RewardOutcome extends RewardBreakdown {
  done: boolean;
  /** How the episode ended (or the caller's `ended_by`); null while it is still running. */
  ended_by: TerminationReason | null;
  /** The ending the reward was computed for: `ended_by`, or `no_tool_call` (the agent stopping now) for a running episode. */
  scored_as: TerminationReason;
  /** The episode is still running: the reward may change, and the environment does not keep it (tau2 recomputes it). */
  provisional: boolean;
  calls: number;
  /** The reward-hacking watch (environments that declare one): the outcome component and the gaming signatures this episode shows. */
  watch?: EpisodeWatch;
}
