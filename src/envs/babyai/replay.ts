import { UsageError, parseConfig, type JsonValue, type ReplayRequest } from "../../core/index.ts";
import { readJsonItems } from "../_kit/read-items.ts";
import { parseReply } from "./balrog.ts";
import { printGrid } from "./grid.ts";
import { babyaiEnvironment, levelSeedWords, taskForIndex } from "./index.ts";
import { MixedTrainLocalLevel } from "./level.ts";
import { replayReplies } from "./replies.ts";
import { describeObservation } from "./text.ts";

/** Python's `round(value, digits)`: correctly rounded, exact ties to even (e.g. 0.7890625 → 0.789062). */
export function roundLikePython(value: number, digits = 6): number {
  const exact = value.toFixed(30);
  const point = exact.indexOf(".");
  const tail = exact.slice(point + 1 + digits);
  if (/^50*$/.test(tail)) {
    const kept = exact.slice(0, point + 1 + digits);
    const lastDigit = Number(kept[kept.length - 1]);
    if (lastDigit % 2 === 0) return Number(kept);
  }
  return Number(value.toFixed(digits));
}

export interface BabyAIReplayStep {
  action: string;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  text: string;
  /** Present only when the given string was not a valid action (BALROG then runs "go forward"). */
  candidate?: string;
}

export interface BabyAIReplayRecord {
  task: string;
  num_dists: number;
  seed: number;
  mission: string;
  max_steps: number;
  width: number;
  height: number;
  agent_pos: [number, number];
  agent_dir: number;
  grid: string[];
  text0: string;
  steps: BabyAIReplayStep[];
  episode_return: number;
  /** Actions left over after the episode ended (not applied). */
  unused_actions: number;
}

/**
 * `toolgym replay babyai`: rebuilds the level for (split, seed, index) and applies action strings the way
 * BALROG does (invalid → "go forward"), printing the fields of the golden fixture records.
 */
export function replayBabyAI(options: { config: unknown; seed: number; index: number; split?: string; actions: unknown[] }): BabyAIReplayRecord {
  const config = parseConfig("babyai", babyaiEnvironment.configSchema, options.config);
  const split = options.split ?? babyaiEnvironment.defaultSplit;
  const task = taskForIndex(config, options.index);
  const level = new MixedTrainLocalLevel(task, config.num_dists);
  level.reset(levelSeedWords(split, options.seed, options.index));
  const record: BabyAIReplayRecord = {
    task,
    num_dists: config.num_dists,
    seed: options.seed,
    mission: level.mission,
    max_steps: level.maxSteps,
    width: level.width,
    height: level.height,
    agent_pos: [level.agentX, level.agentY],
    agent_dir: level.agentDir,
    grid: printGrid(level.grid, level.agentX, level.agentY, level.agentDir),
    text0: describeObservation(level),
    steps: [],
    episode_return: 0,
    unused_actions: 0,
  };
  let total = 0;
  for (let position = 0; position < options.actions.length; position++) {
    const item = options.actions[position];
    if (typeof item !== "string")
      throw new UsageError({ message: `babyai --calls item ${position + 1} must be an action string such as "go forward", got ${JSON.stringify(item)}` });
    if (level.terminated || level.truncated) {
      record.unused_actions = options.actions.length - position;
      break;
    }
    const parsed = parseReply(item);
    level.step(parsed.action);
    total += level.lastReward;
    const step: BabyAIReplayStep = {
      action: parsed.actionName,
      reward: roundLikePython(level.lastReward),
      terminated: level.terminated,
      truncated: level.truncated,
      text: describeObservation(level),
    };
    if (!parsed.valid) step.candidate = item;
    record.steps.push(step);
  }
  record.episode_return = roundLikePython(total);
  return record;
}

/**
 * `toolgym replay babyai`: `--replies FILE` replays raw model replies through BALROG's text protocol (the
 * agent of `balrog_agent`); `--calls FILE` applies action strings the way BALROG applies them and prints
 * the golden-fixture fields.
 */
// A function declaration, not a const: index.ts and this module import each other, and a declaration is
// initialised before either module body runs.
export async function babyaiReplay(request: ReplayRequest): Promise<JsonValue> {
  if (request.replies) {
    const replies = readJsonItems(request.replies, "--replies");
    return replayReplies({ config: request.config, seed: request.seed, index: request.index, split: request.split, replies }) as unknown as JsonValue;
  }
  if (!request.calls)
    throw new UsageError({
      code: "REPLAY_INPUT_MISSING",
      message: "babyai replay needs --replies FILE (a JSON array of raw model replies) or --calls FILE (a JSON array of action strings)",
    });
  const actions = readJsonItems(request.calls, "--calls");
  return replayBabyAI({ config: request.config, seed: request.seed, index: request.index, split: request.split, actions }) as unknown as JsonValue;
}
