import type { AnyEnvironment, Trajectory } from "../core/index.ts";
import { episodeId } from "../runs/identity.ts";
import { resultFromTrajectory } from "../runs/record.ts";
import type { ResultRecord } from "../runs/schemas.ts";
import { runEpisode } from "../rollout/run-episode.ts";
import type { PreparedModel } from "./agent-factory.ts";
import type { EvaluationRow } from "./run-metadata.ts";
import { trialSeeds } from "./trials.ts";

/**
 * One episode of a run: task `index`, trial `sample` (trials > 1 replay a task with fresh agents) and
 * the trial's seed, which the environment, the scripted policy and a model's sampling receive.
 */
export interface EpisodeSlot {
  index: number;
  sample: number;
  trialSeed: number;
  id: string;
}

/**
 * The episodes of a row not yet on disk, in task order, made one at a time as the pool takes them: a run
 * of a million episodes holds the slots in flight, not a million slot objects (`count` says how many).
 */
export function pendingEpisodes(row: EvaluationRow, finished: ReadonlySet<string>): { count: number; slots: Iterator<EpisodeSlot> & Iterable<EpisodeSlot> } {
  const samples = row.samples ?? 1;
  const seeds = trialSeeds(row.env, row.seed, samples);
  let count = row.n * samples;
  if (finished.size > 0)
    for (let index = 0; index < row.n; index++)
      for (let sample = 0; sample < samples; sample++) if (finished.has(episodeId(row.env.id, row.split, row.seed, index, sample))) count--;
  function* slots(): Generator<EpisodeSlot> {
    for (let index = 0; index < row.n; index++) {
      for (let sample = 0; sample < samples; sample++) {
        const id = episodeId(row.env.id, row.split, row.seed, index, sample);
        if (!finished.has(id)) yield { index, sample, trialSeed: seeds[sample] as number, id };
      }
    }
  }
  return { count, slots: slots() };
}

/** The gold answer of a task where the environment exposes one (`solution().answer`), else "". */
function answerOf(env: AnyEnvironment, task: unknown): string {
  try {
    const solution = env.solution(task) as { answer?: unknown } | null;
    const answer = solution && typeof solution === "object" ? solution.answer : undefined;
    return typeof answer === "string" ? answer : answer === undefined || answer === null ? "" : JSON.stringify(answer);
  } catch {
    return "";
  }
}

/**
 * Plays one episode and shapes it into its results.jsonl record. Returns undefined when the episode was
 * cut short by `signal` (a cancelled run): such an episode is not a result and is rerun on --resume.
 */
export async function playEpisode(row: EvaluationRow, model: PreparedModel, slot: EpisodeSlot, signal: AbortSignal): Promise<ResultRecord | undefined> {
  const { env, split, seed, config } = row;
  const task = env.generate({ split, seed, index: slot.index, config });
  const startedAt = new Date();
  // A benchmark whose runner re-runs a simulation that raised (tau2) gets the same re-runs here, same seed,
  // fresh agent; the episode records every attempt's reason.
  const retries = env.simulationRetries;
  const reasons: string[] = [];
  let attempts = 0;
  let trajectory: Trajectory;
  for (;;) {
    attempts++;
    const agent = model.createAgent({ task, index: slot.index, sample: slot.sample, trialSeed: slot.trialSeed, episodeId: slot.id, split, seed });
    trajectory = await runEpisode({
      env,
      split,
      seed,
      index: slot.index,
      config,
      agent,
      task,
      maxTurns: row.maxTurns,
      onNoToolCall: row.onNoToolCall,
      signal,
      context: { trial: slot.sample, seed: slot.trialSeed },
    });
    const reason = retries && !signal.aborted ? retries.raised(trajectory) : undefined;
    if (reason !== undefined) reasons.push(reason);
    if (reason === undefined || attempts > (retries?.retries ?? 0)) break;
  }
  if (reasons.length > 0)
    trajectory.diagnostics = {
      ...trajectory.diagnostics,
      simulation_attempts: attempts,
      attempt_errors: reasons,
      retries_exhausted: reasons.length === attempts,
    };
  if (signal.aborted && trajectory.termination === "errored") return undefined;
  const firstReply = trajectory.messages.findIndex((message) => message.role === "assistant");
  return resultFromTrajectory({
    trajectory,
    promptLength: firstReply === -1 ? trajectory.messages.length : firstReply,
    sample: slot.sample,
    trialSeed: slot.trialSeed,
    answer: answerOf(env, task),
    startedAt: startedAt.toISOString(),
    durationMs: Date.now() - startedAt.getTime(),
  });
}
