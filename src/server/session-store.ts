import { episodeFromBreakdown, watchEpisode } from "../audit/signatures.ts";
import { randomUUID } from "node:crypto";
import {
  ServerError,
  TERMINATION_REASONS,
  ToolgymError,
  type AnyEnvironment,
  type Message,
  type RewardBreakdown,
  type TerminationReason,
  type ToolSpec,
} from "../core/index.ts";
import { EpisodeDriver, type CallOutcome as DriverOutcome } from "../rollout/episode-driver.ts";
import { callRequestProblem } from "../rollout/parse-arguments.ts";
import { withoutAddresses } from "./external-config.ts";
import { prepareTask, taskAddress, taskFailed } from "./task-address.ts";
import { SessionQuota } from "./session-quota.ts";
import type { CallOutcome, EnvCounters, RewardOutcome, ServerCounters, Session, SessionAddress, SessionStoreOptions, SharedTask } from "./session-types.ts";

export type { CallOutcome, EnvCounters, RewardOutcome, ServerCounters, Session, SessionAddress, SessionStoreOptions } from "./session-types.ts";

function badRequest(code: string, message: string, status = 400): ServerError {
  return new ServerError({ code, message, status });
}

function toolFailed(envId: string, name: string, error: unknown): ServerError {
  return badRequest(
    "TOOL_FAILED",
    `${envId}: tool '${name.slice(0, 80)}' failed on these arguments: ${withoutAddresses(String((error as Error)?.message))}`,
    422,
  );
}

/**
 * Open episodes keyed by session id. Pure bookkeeping around `EnvironmentDefinition.start`: every error
 * is a `ServerError` with a 4xx status, so the HTTP and WebSocket layers only translate it.
 */
export class SessionStore {
  readonly counters: ServerCounters = {
    sessionsCreated: 0,
    sessionsClosed: 0,
    sessionsReaped: 0,
    toolCalls: 0,
    toolErrors: 0,
    repeatedCalls: 0,
    rewards: 0,
    byEnv: {},
  };
  /**
   * Open sessions by id: a dictionary without a prototype, not a `Map`. Under create/close churn a `Map`
   * rebuilds its table again and again, and V8 links each replaced table to the next; once one of them sat
   * in the old generation, that dead table kept the sessions of the young ones alive through every scavenge,
   * so each session was promoted (~700 KB per scavenge, 3 ms pauses, measured with --trace-gc-nvp).
   */
  private sessions: Record<string, Session> = Object.create(null) as Record<string, Session>;
  private count = 0;
  private readonly quota: SessionQuota;
  /**
   * The tasks of open sessions by address (environment, split, seed, index, config). A GRPO trainer opens a
   * group of sessions on one prompt at once; they share one task, so the group generates it once and its
   * episodes share what they derive from it (search_plan's index and plan length). Episodes never change
   * their task (the environment contract checks it). An entry goes when its last session closes.
   */
  private tasks: Record<string, SharedTask> = Object.create(null) as Record<string, SharedTask>;
  private readonly options: SessionStoreOptions;
  private readonly now: () => number;

  constructor(options: SessionStoreOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.quota = new SessionQuota(options.maxSessions, options.maxSessionsPerClient);
  }

  get size(): number {
    return this.count;
  }

  get maxSessions(): number {
    return this.options.maxSessions;
  }

  environment(id: unknown): AnyEnvironment {
    if (typeof id !== "string" || id === "") throw badRequest("INVALID_FIELD", "'env' must be an environment id string");
    const env = Object.hasOwn(this.options.environments, id) ? this.options.environments[id] : undefined;
    if (!env) throw badRequest("ENV_UNKNOWN", `unknown environment '${id.slice(0, 80)}'; available: ${Object.keys(this.options.environments).join(", ")}`, 404);
    return env;
  }

  /**
   * The slow work of a new session's task done off the event loop first (environment.prepareTask: babyai's
   * longest level searches); undefined when there is none, or the task is already open in another session.
   */
  prepare(address: SessionAddress): Promise<void> | undefined {
    const env = this.environment(address.env);
    if (!env.prepareTask) return undefined;
    const resolved = taskAddress(env, address);
    return this.tasks[resolved.key] ? undefined : prepareTask(env, resolved);
  }

  /** Throws the 429 a new session of `client` would get now (checked again when it is created). */
  checkQuota(client: string): void {
    this.quota.check(client, this.count);
  }

  create(address: SessionAddress, client = "anonymous"): Session {
    const env = this.environment(address.env);
    this.checkQuota(client);
    const resolved = taskAddress(env, address);
    const { split, seed, index, maxTurns, config, key } = resolved;
    let task = this.tasks[key];
    let driver: EpisodeDriver;
    try {
      if (!task) task = { key, task: env.generate({ split, seed, index, config }), sessions: 0 };
      driver = new EpisodeDriver({ env, split, seed, index, config, maxTurns, transcript: false, task: task.task });
    } catch (error) {
      throw taskFailed(env, resolved, error);
    }
    // A session whose episode a trainer could not play through here (a partner reading plain messages) is refused, never scored 0.
    const refusal = driver.episode.trainerRefusal;
    if (refusal) throw badRequest("PROTOCOL_NOT_SERVABLE", refusal, 422);
    const partialReward = driver.episode.partialReward;
    if (partialReward && !this.options.allowPartialRewards) throw badRequest("PARTIAL_REWARD", partialReward, 422);
    if (task.sessions++ === 0) this.tasks[key] = task;
    const session: Session = {
      id: (this.options.idPrefix ?? "") + randomUUID(),
      env,
      split,
      seed,
      index,
      driver,
      maxTurns: driver.maxTurns,
      calls: 0,
      lastUsed: this.now(),
      lastSequence: 0,
      envCounters: this.envCounters(env.id),
      task,
      client,
      ...(partialReward ? { partialReward } : {}),
    };
    this.sessions[session.id] = session;
    this.count++;
    this.quota.add(client);
    this.counters.sessionsCreated++;
    session.envCounters.sessions++;
    return session;
  }

  /**
   * The open session's own id string when `id` names one, else `id`: the same text, but a later lookup with
   * the store's own string compares by identity instead of character by character (http-connection.ts keeps
   * it for the connection's next calls).
   */
  ownId(id: string): string {
    return this.sessions[id]?.id ?? id;
  }

  /**
   * The open session `id` of `client`: a session belongs to the token that created it, and to any other
   * client it does not exist (404, the same answer as an unknown id, so ids of others cannot be probed).
   */
  get(id: unknown, client?: string): Session {
    const session = typeof id === "string" ? this.sessions[id] : undefined;
    if (!session || (client !== undefined && session.client !== client))
      throw badRequest(
        "SESSION_UNKNOWN",
        `unknown or expired session ${JSON.stringify(id)?.slice(0, 60)}; create one with POST /sessions (idle sessions are closed after ${Math.round(this.options.idleMilliseconds / 1000)} s)`,
        404,
      );
    session.lastUsed = this.now();
    return session;
  }

  /**
   * Runs one tool call. With a `sequence` (the session's calls numbered 1, 2, 3, … by the client), a call whose
   * number repeats the last one is not run again: the stored reply is returned, so a client may resend a call
   * whose answer it lost (a dropped connection) without the tool running twice.
   */
  call(id: unknown, name: unknown, args: unknown, sequence?: unknown, client?: string): CallOutcome | Promise<CallOutcome> {
    const session = this.get(id, client);
    if (sequence !== undefined && sequence !== null) {
      if (typeof sequence !== "number" || !Number.isSafeInteger(sequence) || sequence < 1)
        throw badRequest(
          "INVALID_FIELD",
          `'seq' must be a positive integer (the session's calls numbered from 1), got ${JSON.stringify(sequence)?.slice(0, 40)}`,
        );
      if (sequence === session.lastSequence && session.lastReply) {
        this.counters.repeatedCalls++;
        if (session.lastReply instanceof ServerError) throw session.lastReply;
        return session.lastReply;
      }
      if (sequence !== session.lastSequence + 1)
        throw badRequest(
          "SEQUENCE_MISMATCH",
          `call 'seq' ${sequence} does not follow the session's last call ${session.lastSequence}; send seq ${session.lastSequence + 1} for a new call or repeat ${session.lastSequence} to get the last reply again`,
          409,
        );
    }
    if (session.pending)
      throw badRequest("CALL_PENDING", "the session's previous call has not been answered yet (its simulated user is replying); send calls one at a time", 409);
    try {
      const outcome = this.run(session, name, args);
      if (typeof sequence === "number") this.remember(session, sequence, outcome);
      if (outcome instanceof Promise) {
        session.pending = outcome;
        const settle = () => {
          session.pending = undefined;
        };
        outcome.then(settle, settle);
      }
      return outcome;
    } catch (error) {
      if (typeof sequence === "number" && error instanceof ServerError) this.remember(session, sequence, error);
      throw error;
    }
  }

  private remember(session: Session, sequence: number, reply: CallOutcome | ServerError | Promise<CallOutcome>): void {
    session.lastSequence = sequence;
    session.lastReply = reply;
  }

  private run(session: Session, tool: unknown, args: unknown): CallOutcome | Promise<CallOutcome> {
    // The request's shape only; the episode driver looks the tool up and checks the arguments.
    const problem = callRequestProblem(tool, args);
    if (problem !== undefined) throw badRequest("INVALID_FIELD", problem.message);
    const name = tool as string;
    const counters = session.envCounters;
    session.calls++;
    this.counters.toolCalls++;
    counters.toolCalls++;
    // The trainer's tool loop sends one call at a time and does not say where a model turn ends, so each
    // call counts as one turn of the episode (the reward's turn inputs are documented this way). A call past
    // the turn limit ends the episode there, as the agent loop does, and is answered without running: a
    // trainer that keeps calling (TRL's tool loop has no limit by default) must not earn reward in training
    // for what an evaluation of the same policy cuts off.
    if (!session.driver.beginTurn() && !session.driver.done) session.driver.end("max_turns");
    // Made only when a tool throws: this runs for every call.
    const failed = toolFailed;
    let result;
    try {
      // A tool answered with I/O (a simulated user's reply) first; every other call synchronously.
      // Asked only of episodes that have such tools: this runs for every call, and the call object is not free.
      const pending = session.driver.episode.callAsync ? session.driver.callAsync({ name, arguments: args ?? {} }) : undefined;
      if (pending)
        return pending.then(
          (answer) => this.outcome(session, answer),
          (error: unknown) => {
            // Closed while waiting (deleted, expired, disconnected): its request was aborted, not the tool's fault.
            if (this.sessions[session.id] !== session)
              throw badRequest("SESSION_CLOSED", "the session was closed while this call waited for its simulated user; open a new session", 409);
            throw failed(session.env.id, name, error);
          },
        );
      result = session.driver.call({ name, arguments: args ?? {} });
    } catch (error) {
      throw failed(session.env.id, name, error);
    }
    return this.outcome(session, result);
  }

  private outcome(session: Session, result: DriverOutcome): CallOutcome {
    const counters = session.envCounters;
    if (result.isError) {
      this.counters.toolErrors++;
      counters.toolErrors++;
    }
    // Two literals rather than a spread: this runs for every tool call, and the keys keep their order.
    return result.errorKind
      ? { content: result.content, is_error: result.isError, error_kind: result.errorKind, done: session.driver.done, calls: session.calls }
      : { content: result.content, is_error: result.isError, done: session.driver.done, calls: session.calls };
  }

  /**
   * The reward breakdown as the episode stands. Without `endedBy`, an ended episode counts as it ended
   * (`finished` or `truncated`) and one at its turn limit as `max_turns`. A running episode has not ended:
   * it answers `ended_by: null, done: false` with the reward it would get if the agent stopped now
   * (`scored_as: "no_tool_call"`; TRL asks at that point, when the model stops calling tools).
   */
  async reward(id: unknown, endedBy?: unknown, client?: string): Promise<RewardOutcome> {
    const session = this.get(id, client);
    if (endedBy !== undefined && (!TERMINATION_REASONS.includes(endedBy as TerminationReason) || endedBy === "errored")) {
      throw badRequest("INVALID_FIELD", `'ended_by' must be one of ${TERMINATION_REASONS.filter((reason) => reason !== "errored").join(", ")}`);
    }
    const driver = session.driver;
    const ended = (endedBy as TerminationReason | undefined) ?? (driver.done ? driver.termination : driver.turns >= driver.maxTurns ? "max_turns" : null);
    const ending = ended ?? "no_tool_call";
    let breakdown: RewardBreakdown;
    try {
      breakdown = (await driver.reward(ending)) as RewardBreakdown;
    } catch (error) {
      throw badRequest("REWARD_FAILED", `${session.env.id}: reward could not be computed: ${withoutAddresses(String((error as Error)?.message))}`, 422);
    }
    this.counters.rewards++;
    const counters = this.envCounters(session.env.id);
    counters.rewards++;
    if (typeof breakdown.total === "number") counters.rewardSum += breakdown.total;
    const answer: RewardOutcome = { ...breakdown, done: driver.done, ended_by: ended, scored_as: ending, provisional: ended === null, calls: session.calls };
    const formatErrors = driver.formatErrors.length;
    const diagnostics = session.env.watch && driver.episode.diagnostics ? driver.episode.diagnostics({ formatErrors }) : {};
    const watch = watchEpisode(
      session.env,
      episodeFromBreakdown(breakdown, { diagnostics, termination: ending, formatErrors, turns: driver.turns }),
      session.task.task,
    );
    if (watch) answer.watch = watch;
    return answer;
  }

  close(id: unknown, client?: string): boolean {
    if (typeof id !== "string") return false;
    const session = this.sessions[id];
    if (session === undefined || (client !== undefined && session.client !== client)) return false;
    this.remove(session);
    this.counters.sessionsClosed++;
    return true;
  }

  /** Open tasks (shared by the open sessions on one address); tests read it. */
  get openTasks(): number {
    return Object.keys(this.tasks).length;
  }

  private remove(session: Session): void {
    delete this.sessions[session.id];
    this.count--;
    this.quota.remove(session.client);
    if (--session.task.sessions === 0) delete this.tasks[session.task.key];
    // Work started for the session ends with it: a simulated user's request in flight is aborted.
    session.driver.episode.close?.();
  }

  /** Closes sessions idle for longer than the configured time; returns how many were closed. */
  reapIdle(): number {
    const limit = this.now() - this.options.idleMilliseconds;
    let reaped = 0;
    for (const session of Object.values(this.sessions)) {
      if (session.lastUsed < limit) {
        this.remove(session);
        reaped++;
      }
    }
    this.counters.sessionsReaped += reaped;
    return reaped;
  }

  closeAll(): void {
    for (const session of Object.values(this.sessions)) session.driver.episode.close?.();
    this.sessions = Object.create(null) as Record<string, Session>;
    this.tasks = Object.create(null) as Record<string, SharedTask>;
    this.count = 0;
    this.quota.clear();
  }

  private envCounters(envId: string): EnvCounters {
    let counters = this.counters.byEnv[envId];
    if (!counters) {
      counters = { sessions: 0, toolCalls: 0, toolErrors: 0, rewards: 0, rewardSum: 0 };
      this.counters.byEnv[envId] = counters;
    }
    return counters;
  }
}

/**
 * Awaits what happens before the agent's first turn (a simulated user's first message, over the network
 * for a user model): a session's reset returns the whole opening, as a dataset row's prompt holds it. A
 * failure closes the session and names the partner.
 */
export function openConversation(store: SessionStore, session: Session): Session | Promise<Session> {
  const episode = session.driver.episode;
  if (!episode.opening || session.opening) return session;
  return episode.opening().then(
    (messages) => {
      session.opening = messages;
      return session;
    },
    (error: unknown) => {
      store.close(session.id);
      const text = ToolgymError.isInstance(error) ? error.message : String((error as Error)?.message ?? error);
      throw badRequest("OPENING_FAILED", `${session.env.id}: the simulated user could not open the conversation: ${withoutAddresses(text)}`, 502);
    },
  );
}

/** The prompt and tools a new session starts from, as sent to clients. */
export function describeSession(session: Session): {
  session_id: string;
  env: string;
  split: string;
  seed: number;
  index: number;
  protocol: string;
  max_turns: number;
  messages: Message[];
  tools: ToolSpec[];
  partial_reward?: string;
} {
  return {
    session_id: session.id,
    env: session.env.id,
    split: session.split,
    seed: session.seed,
    index: session.index,
    protocol: session.driver.episode.protocol,
    max_turns: session.maxTurns,
    messages: session.opening ? [...session.driver.episode.messages, ...session.opening] : session.driver.episode.messages,
    tools: session.driver.episode.tools,
    ...(session.partialReward ? { partial_reward: session.partialReward } : {}),
  };
}
