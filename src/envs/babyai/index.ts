import { babyaiWatch } from "./signatures.ts";
import { z } from "zod";
import { EnvConfigError, defineEnvironment } from "../../core/index.ts";
import { babyaiAudit } from "./policies/audit.ts";
import { babyaiPolicies } from "./policies/index.ts";
import { babyaiReplay } from "./replay.ts";
import { startBabyAIEpisode } from "./episode.ts";
import { printGrid } from "./grid.ts";
import { BABYAI_TASKS, MixedTrainLocalLevel, type BabyAITask } from "./level.ts";
import { summarizeBabyAI } from "./summary.ts";
import { prepareLevel } from "./level-search.ts";

/**
 * `babyai`: BALROG's BabyAI benchmark (`BabyAI-MixedTrainLocal-v0/<task>`), ported bit for bit from the
 * Minigrid fork BALROG installs. See about.md for the protocol, the seed mapping and the metrics.
 */
const configSchema = z.strictObject({
  task: z.enum(["mixed", ...BABYAI_TASKS]).default("mixed"),
  num_dists: z.number().int().min(0).max(16).default(0),
  protocol: z.enum(["text", "tools"]).default("text"),
  max_text_history: z.number().int().min(1).max(64).default(16),
  feedback_on_invalid_action: z.boolean().default(true),
  balrog_agent: z.enum(["naive", "cot"]).default("naive"),
});
export type BabyAIConfig = z.infer<typeof configSchema>;

export interface BabyAITaskRecord {
  split: string;
  seed: number;
  index: number;
  task: BabyAITask;
  num_dists: number;
  /** numpy seed as little-endian uint32 words: seed + index·2^32 (+ 2^64 on the train split). */
  level_seed: number[];
  mission: string;
  max_steps: number;
  protocol: "text" | "tools";
  max_text_history: number;
  feedback_on_invalid_action: boolean;
  /** BALROG's agent type on the text protocol (`naive` or chain-of-thought `cot`). */
  balrog_agent: "naive" | "cot";
}

/** The numpy seed words of an episode: `seed + index·2^32`, plus `2^64` on the train split. */
export function levelSeedWords(split: string, seed: number, index: number): number[] {
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32)
    throw new EnvConfigError({ message: `babyai: seed ${seed} must be an integer in [0, 2^32); it is the numpy seed of the first episode` });
  if (!Number.isInteger(index) || index < 0 || index >= 2 ** 32)
    throw new EnvConfigError({ message: `babyai: index ${index} must be an integer in [0, 2^32)` });
  if (split === "train") return [seed, index, 1];
  return index === 0 ? [seed] : [seed, index];
}

/** The task of an episode: fixed, or BALROG's five tasks in turn (index mod 5) when `mixed`. */
export function taskForIndex(config: BabyAIConfig, index: number): BabyAITask {
  return config.task === "mixed" ? (BABYAI_TASKS[index % BABYAI_TASKS.length] as BabyAITask) : config.task;
}

export const babyaiEnvironment = defineEnvironment<BabyAIConfig, BabyAITaskRecord>({
  id: "babyai",
  version: "1",
  title: "BALROG BabyAI",
  policies: babyaiPolicies,
  audit: babyaiAudit,
  watch: babyaiWatch,
  metrics: ["return"],
  // BALROG reports return and progression per task as well as overall.
  breakdown: { key: "task", metrics: ["return", "progression"] },
  seedSuite: { order: 4, n: 50, quickN: 5 },
  replay: babyaiReplay,
  description: "BALROG's BabyAI (MixedTrainLocal: goto, pickup, open, putnext, pick up then go to) with BALROG's text interface; bit-exact levels.",
  protocol: "text",
  splits: ["eval", "train"],
  defaultSplit: "eval",
  configSchema,
  maxTurns: (task) => task.max_steps,
  generate({ split, seed, index, config }) {
    if (config.protocol === "tools" && config.balrog_agent !== "naive")
      throw new EnvConfigError({
        message: `babyai: balrog_agent "${config.balrog_agent}" applies to the text protocol only; drop it or set protocol "text"`,
      });
    const task = taskForIndex(config, index);
    const levelSeed = levelSeedWords(split, seed, index);
    const level = new MixedTrainLocalLevel(task, config.num_dists);
    level.reset(levelSeed);
    return {
      split,
      seed,
      index,
      task,
      num_dists: config.num_dists,
      level_seed: levelSeed,
      mission: level.mission,
      max_steps: level.maxSteps,
      protocol: config.protocol,
      max_text_history: config.max_text_history,
      feedback_on_invalid_action: config.feedback_on_invalid_action,
      balrog_agent: config.balrog_agent,
    };
  },
  // A level rejects up to ~100,000 draws (putnext with 16 distractors at some seeds): a server searches it on a worker thread first.
  prepareTask: ({ split, seed, index, config }) =>
    prepareLevel({ task: taskForIndex(config, index), numDistractors: config.num_dists, levelSeed: levelSeedWords(split, seed, index) }),
  publicView: (task) => ({ task: task.task, mission: task.mission, max_steps: task.max_steps, num_dists: task.num_dists, protocol: task.protocol }),
  solution(task) {
    const level = new MixedTrainLocalLevel(task.task, task.num_dists);
    level.reset(task.level_seed);
    return {
      mission: level.mission,
      grid: printGrid(level.grid, level.agentX, level.agentY, level.agentDir),
      agent_pos: [level.agentX, level.agentY],
      agent_dir: level.agentDir,
    };
  },
  // The mission is public by design; the start layout is not (the agent sees only its egocentric view).
  secrets(task) {
    const level = new MixedTrainLocalLevel(task.task, task.num_dists);
    level.reset(task.level_seed);
    return [printGrid(level.grid, level.agentX, level.agentY, level.agentDir).join("\n")];
  },
  start: (task) =>
    startBabyAIEpisode({
      task: task.task,
      numDistractors: task.num_dists,
      levelSeed: task.level_seed,
      protocol: task.protocol,
      maxTextHistory: task.max_text_history,
      feedbackOnInvalidAction: task.feedback_on_invalid_action,
      // Task records written before `balrog_agent` existed were naive runs.
      balrogAgent: task.balrog_agent ?? "naive",
    }),
  // BALROG's progression % ± standard error and its printed line, beside toolgym's bootstrap CI.
  summary: { key: "balrog", label: "BALROG", summarize: summarizeBabyAI },
});
