import type { AnyEnvironment, JsonValue } from "../core/index.ts";
import { generationPath, taskSetHash, toolSchemasHash } from "../runs/identity.ts";
import type { GenerationPath } from "../runs/schemas.ts";
import type { RunDescription } from "../runs/writer.ts";
import type { PreparedModel } from "./agent-factory.ts";
import { trialSeeds } from "./trials.ts";

/** One (environment, task set) row of an evaluation. */
export interface EvaluationRow {
  env: AnyEnvironment;
  /** Parsed config (parseConfig). */
  config: unknown;
  split: string;
  seed: number;
  n: number;
  /** Trials per task (`--num-trials`, or its older name `--samples`); each task runs this many times. */
  samples?: number;
  maxTurns?: number;
  onNoToolCall?: "nudge" | "end";
  benchmark?: string;
  metrics?: string[];
  mode?: string | null;
}

/** The `mode` key of an environment config (multihop QA), recorded so reports name the mode of every number. */
function configMode(config: unknown): string | null {
  const mode = (config as { mode?: unknown } | null)?.mode;
  return typeof mode === "string" ? mode : null;
}

/**
 * What a run of `model` over `row` records about itself: the environment and task set, the model, and
 * the generation path (everything that changes what the model sees; its fingerprint guards --resume and
 * the report's side-by-side comparisons). The first task stands for the task set's protocol and tools.
 */
export function describeRun(row: EvaluationRow, model: PreparedModel): RunDescription & { generation: GenerationPath } {
  const { env, config, split, seed, n } = row;
  const firstTask = env.generate({ split, seed, index: 0, config });
  const firstEpisode = env.start(firstTask);
  const generation = generationPath({
    sampling: model.sampling,
    chatTemplateKwargs: model.chatTemplateKwargs,
    chatTemplateHash: model.chatTemplateHash,
    maxTurns: row.maxTurns ?? env.maxTurns(firstTask),
    toolSchemasHash: toolSchemasHash(firstEpisode.protocol === "tools" ? firstEpisode.tools : []),
    protocol: firstEpisode.protocol,
    onNoToolCall: row.onNoToolCall ?? "nudge",
  });
  return {
    env: {
      id: env.id,
      version: env.version,
      split,
      config: config as JsonValue,
      seed,
      n,
      samples: row.samples ?? 1,
      trialSeeds: trialSeeds(env, seed, row.samples ?? 1),
      mode: row.mode ?? configMode(config),
      protocol: firstEpisode.protocol,
    },
    benchmark: row.benchmark ?? env.id,
    metrics: row.metrics ?? ["reward"],
    ...model.metadata,
    generation,
    taskSetHash: taskSetHash(env.id, split, seed, n),
  };
}
