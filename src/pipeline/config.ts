import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { DataError } from "../core/index.ts";
import { suiteRowSchema } from "../eval/suites/suite.ts";

/**
 * What `toolgym pipeline` runs: a preset (presets.ts) or a YAML/JSON file of the same shape. Every value
 * that reaches a Python recipe is a flag of that recipe, so the dry run can print the exact commands.
 */
const flags = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

export const STAGES = ["data", "sft", "eval-pre", "grpo", "eval-post", "card"] as const;
export type StageName = (typeof STAGES)[number];

export const pipelineConfigSchema = z.strictObject({
  preset: z.string().min(1),
  description: z.string().default(""),
  /** The environment GRPO trains on and the trajectories come from. */
  env: z.string().min(1),
  envConfig: z.record(z.string(), z.unknown()).default({}),
  /** The starting model: a hub id or directory, or a tiny Qwen3 built here (random weights, real tokenizer). */
  base: z.discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("model"), model: z.string().min(1) }),
    // scripts/make-tiny-qwen3.py: random weights and Qwen3's chat template; the real Qwen3 tokenizer, or with
    // `vocabularySize` a small BPE trained on the data stage's own trajectories (see that script)
    z.strictObject({
      kind: z.literal("tiny-qwen3"),
      hiddenSize: z.number().int().min(16).default(64),
      layers: z.number().int().min(1).default(2),
      vocabularySize: z.number().int().min(512).optional(),
      /** At most this many steps copying repeated random token spans first (until 0.9 copy accuracy, then a fifth as many decaying): the in-context copying a real base model brings. */
      inductionSteps: z.number().int().min(0).default(0),
      /** Causal-LM steps on the whole trajectories before SFT (the stand-in for a base model's pretraining). */
      pretrainSteps: z.number().int().min(0).default(0),
      /** Seeds the random weights and the copying and pretraining batches. */
      seed: z.number().int().min(0).default(0),
    }),
  ]),
  data: z.strictObject({
    /** Scripted policies whose train-split trajectories become SFT rows, and episodes per policy. */
    policies: z.array(z.string().min(1)).default([]),
    episodes: z.number().int().min(0).default(0),
    seed: z.number().int().min(0).default(1),
    /** Keep only trajectories with at least this reward (noisy oracles also fail). */
    minReward: z.number().optional(),
    maxTokens: z.number().int().min(16).default(4096),
    /** GRPO prompts (train split). */
    prompts: z.number().int().positive(),
    promptSeed: z.number().int().min(0).default(2),
  }),
  /** Flags of python/train_sft.py; absent: the stage is skipped (the base model goes straight to GRPO). */
  sft: flags.optional(),
  eval: z.strictObject({
    engine: z.enum(["transformers", "vllm"]).default("transformers"),
    /** A built-in suite name, or explicit rows. */
    suite: z.union([z.string().min(1), z.array(suiteRowSchema).min(1)]),
    dataDir: z.string().optional(),
    temperature: z.number().min(0).default(0),
    maxTokens: z.number().int().positive().default(512),
    maxTurns: z.number().int().positive().optional(),
    concurrency: z.number().int().positive().default(4),
    chatTemplateKwargs: z.record(z.string(), z.unknown()).default({ enable_thinking: false }),
    /** Extra arguments of the server command (`vllm serve` flags, for example). */
    serverArgs: z.array(z.string()).default([]),
  }),
  grpo: z.strictObject({
    /** Flags of python/train_grpo.py (besides model, dataset, server and output, which the pipeline sets). */
    flags,
    /** How train_grpo.py is started: "python" or an `accelerate launch` prefix for several GPUs. */
    launcher: z.array(z.string()).default([]),
    /** Stop when every group had zero reward variance in each of the first K logged steps (0 = never). */
    noSignalSteps: z.number().int().min(0).default(3),
  }),
});
export type PipelineConfig = z.infer<typeof pipelineConfigSchema>;

export function parsePipelineConfig(value: unknown, source: string): PipelineConfig {
  const parsed = pipelineConfigSchema.safeParse(value);
  if (parsed.success) {
    const { base, sft, data } = parsed.data;
    const corpusNeeded = base.kind === "tiny-qwen3" && (base.vocabularySize !== undefined || base.pretrainSteps > 0);
    if (corpusNeeded && (!sft || data.policies.length === 0 || data.episodes === 0))
      throw new DataError({
        code: "PIPELINE_CONFIG_INVALID",
        file: source,
        message:
          "fields 'base.vocabularySize' and 'base.pretrainSteps' learn from the SFT trajectories, so they need `sft`, `data.policies` and `data.episodes` > 0",
      });
    return parsed.data;
  }
  const issue = parsed.error.issues[0];
  const path = issue ? issue.path.map(String).join(".") : "";
  throw new DataError({
    code: "PIPELINE_CONFIG_INVALID",
    file: source,
    message: `${path ? `field '${path}': ` : ""}${issue?.message ?? "invalid"}; start from \`toolgym pipeline --preset tiny --dry-run\`, which prints a complete config`,
  });
}

export function readPipelineConfig(path: string): PipelineConfig {
  let value: unknown;
  try {
    value = parseYaml(readFileSync(path, "utf8"));
  } catch (error) {
    throw new DataError({ code: "PIPELINE_CONFIG_UNREADABLE", file: path, message: `not readable YAML/JSON (${(error as Error).message})`, cause: error });
  }
  return parsePipelineConfig(value, path);
}
