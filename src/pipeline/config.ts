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

/** A model label in run directories and the card (`toolgym eval --model LABEL=URL#NAME`). */
const label = z.string().regex(/^[A-Za-z0-9][\w.-]*$/, "letters, digits, '_', '.', '-' (a run label)");

/** Reward transforms of python/train_grpo.py (`--reward-transform`): controls, not training recipes. */
export const REWARD_TRANSFORMS = ["shuffle_within_group", "constant"] as const;

/**
 * What an evaluated model is in the evidence: trained on the environment's reward (grpo), a control with a
 * transformed reward (control), trained on a deliberately exploitable reward variant (exploit), or the non-RL
 * baseline. Other kinds may join (each says in family.ts whom it is compared with).
 */
export const ARM_KINDS = ["grpo", "control", "exploit", "baseline"] as const;
export type ArmKind = (typeof ARM_KINDS)[number];

/** The models a GRPO arm may start from: the SFT model (`pre`) or the filtered-SFT baseline's model. */
export const ARM_INITS = ["pre", "baseline"] as const;

/**
 * One GRPO run: its own seed, the model it starts from and, for a control, a transform of the reward before the
 * advantage. `envConfig` (merged over the pipeline's for this arm's training episodes only) makes it an `exploit`
 * arm: a deliberately exploitable reward variant that the reward-hacking watch must flag (docs/training.md "The watch").
 */
const armSchema = z.strictObject({
  name: label,
  seed: z.number().int().min(0).default(0),
  transform: z.enum(REWARD_TRANSFORMS).nullable().default(null),
  /** `baseline`: GRPO from the filtered-SFT model (the "filter, then RL" recipe) instead of the SFT model. */
  init: z.enum(ARM_INITS).default("pre"),
  /** Default: `control` with a transform, `exploit` with an env config, else `grpo`. */
  kind: z.enum(ARM_KINDS).optional(),
  envConfig: z.record(z.string(), z.unknown()).optional(),
});
export type Arm = z.infer<typeof armSchema>;

/** An arm's kind: as given, else control with a transform, exploit with an env config, grpo otherwise. */
export const armKind = (arm: Arm): ArmKind => arm.kind ?? (arm.transform ? "control" : arm.envConfig ? "exploit" : "grpo");

/** The arm the top-level summary and the card's title describe: the first trained on the environment's own reward. */
export const firstRealArm = (config: PipelineConfig): Arm | undefined => config.grpo?.arms.find((arm) => armKind(arm) === "grpo");

/** Flags the pipeline sets per arm; a config that also sets them in `grpo.flags` is refused. */
const ARM_FLAGS = ["seed", "reward-transform", "env-config", "curve-steps", "model", "dataset", "env", "server-url", "output-dir"];

export const STAGES = ["data", "sft", "baseline", "eval-pre", "grpo", "eval-post", "card"] as const;
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
    /** GRPO prompts (train split; with a `grpo` stage). */
    prompts: z.number().int().min(0).default(0),
    promptSeed: z.number().int().min(0).default(2),
    /** The split the GRPO prompts come from (tau2_mock has only `base`). */
    promptSplit: z.string().min(1).default("train"),
    /**
     * SFT rows the way the Tau2 card builds them: `policies` play each source's split (`trials` plays per task),
     * each run is exported with `--format tau2-sft`, and `toolgym sft tau2` builds the rows; or `file`, an
     * AReaL-tau2-data file (e.g. tau2_sft_train.jsonl), instead of playing anything.
     */
    tau2: z
      .strictObject({
        sources: z
          .array(
            z.strictObject({
              env: z.string().min(1),
              split: z.string().min(1),
              n: z.number().int().positive(),
              trials: z.number().int().positive().default(1),
              config: z.record(z.string(), z.unknown()).default({}),
            }),
          )
          .default([]),
        file: z.string().min(1).optional(),
        /** A Hugging Face dataset repository `file` is downloaded from (into the data stage's directory). */
        hub: z.string().min(1).optional(),
        /** `sft tau2 --enable-thinking`: the chat template's thinking switch for the rows (null: not passed). */
        enableThinking: z.boolean().nullable().default(false),
      })
      .optional(),
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
    /** Plays per task (`--num-trials`; tau2's pass^k needs k of them). */
    trials: z.number().int().positive().default(1),
    /** tau2's user simulator and NL-assertion judge, URL#NAME (`toolgym pipeline --user-model/--judge-model` override them); absent: the scripted user, no judge. */
    userModel: z.string().min(1).optional(),
    judgeModel: z.string().min(1).optional(),
    /** Also evaluate the base model (label `base`), beside the SFT model. */
    base: z.boolean().default(false),
    /**
     * The development seed (learning curves, and every choice made while designing the run) and the test seed
     * (the suite and sampled evaluations: the final comparison), replacing the rows' own seeds; absent: the rows' seeds.
     */
    seeds: z.strictObject({ dev: z.number().int().min(0), test: z.number().int().min(0) }).optional(),
    /**
     * Floors: every scripted pilot of each row's environment plays the row's tasks; `doNothing` names, per
     * environment id, the pilot that does nothing (its score is the do-nothing floor).
     */
    floors: z.strictObject({ doNothing: z.record(z.string(), z.string()).default({}) }).default({ doNothing: {} }),
  }),
  /** GRPO after SFT; absent: no GRPO stage (the card compares the SFT model with the base model when that is evaluated). */
  grpo: z
    .strictObject({
      /** Flags of python/train_grpo.py (besides model, dataset, server and output, which the pipeline sets). */
      flags,
      /** How train_grpo.py is started: "python" or an `accelerate launch` prefix for several GPUs. */
      launcher: z.array(z.string()).default([]),
      /** Stop when every group had zero reward variance in each of the first K logged steps (0 = never). */
      noSignalSteps: z.number().int().min(0).default(3),
      /** GRPO runs from the same pre model; the first with no transform is the one the top-level summary describes. */
      arms: z
        .array(armSchema)
        .min(1)
        .default([{ name: "grpo", seed: 0, transform: null, init: "pre" }]),
      /** A learning curve: a checkpoint every `every` steps, each evaluated on suite row `benchmark` at `n` tasks (with the pre and final models). */
      curve: z.strictObject({ every: z.number().int().positive(), benchmark: z.string().min(1), n: z.number().int().positive() }).optional(),
    })
    .optional(),
  /** The non-RL baseline: SFT from the base model on the demonstrations with reward ≥ minReward (same SFT flags), evaluated like the arms. */
  baseline: z.strictObject({ name: label.default("filtered-sft"), minReward: z.number(), seed: z.number().int().min(0).default(0) }).optional(),
  /** Sampled evaluation beside greedy, for every model: `samples` per task at `temperature` on suite rows `benchmarks` (first `n` tasks). */
  sampled: z
    .strictObject({
      benchmarks: z.array(z.string().min(1)).min(1),
      n: z.number().int().positive(),
      samples: z.number().int().min(2),
      temperature: z.number().positive(),
    })
    .optional(),
});
export type PipelineConfig = z.infer<typeof pipelineConfigSchema>;

/** Whether the data stage plays scripted trajectories (the SFT rows, a tiny model's corpus and the baseline come from them). */
export function playsTrajectories(config: PipelineConfig): boolean {
  const tau2 = config.data.tau2;
  return config.sft !== undefined && config.data.policies.length > 0 && (tau2 ? tau2.sources.length > 0 : config.data.episodes > 0);
}

/** Whether each suite row is its own `toolgym eval --env` command: trials and a user or judge model are per-environment options. */
export const evaluatesPerRow = (config: PipelineConfig) =>
  config.eval.trials > 1 || config.eval.userModel !== undefined || config.eval.judgeModel !== undefined;

function tau2Problem(config: PipelineConfig): string | undefined {
  const tau2 = config.data.tau2;
  if (!tau2) return undefined;
  if (!config.sft) return "field 'data.tau2' makes SFT rows, so it needs `sft`";
  if (tau2.sources.length > 0 === (tau2.file !== undefined))
    return "field 'data.tau2': give either `sources` (scripted conversations to export) or `file` (an AReaL-tau2-data file), not both or neither";
  if (tau2.sources.length > 0 && config.data.policies.length === 0)
    return "field 'data.tau2.sources' is played by `data.policies`; name at least one (e.g. oracle)";
  if (config.baseline) return "field 'baseline' filters the trajectories' rows by reward; it does not combine with `data.tau2`";
  return undefined;
}

/** Checks the fields that depend on each other; the first problem as a message naming its field. */
function crossFieldProblem(config: PipelineConfig): string | undefined {
  const tau2 = tau2Problem(config);
  if (tau2) return tau2;
  if (config.eval.seeds && config.eval.seeds.dev === config.eval.seeds.test)
    return "field 'eval.seeds': the test seed must differ from the development seed (the final comparison runs on tasks no choice was made on)";
  if (config.baseline && !playsTrajectories(config))
    return "field 'baseline' trains SFT on the teacher's demonstrations, so it needs `sft`, `data.policies` and `data.episodes` > 0";
  if (evaluatesPerRow(config) && typeof config.eval.suite === "string")
    return "fields 'eval.trials', 'eval.userModel' and 'eval.judgeModel' run each row on its own; give `eval.suite` as explicit rows";
  const rows = typeof config.eval.suite === "string" ? undefined : config.eval.suite.map((row) => row.benchmark);
  for (const name of config.sampled?.benchmarks ?? [])
    if (rows && !rows.includes(name)) return `field 'sampled.benchmarks': '${name}' is not a row of eval.suite (${rows.join(", ")})`;
  const grpo = config.grpo;
  if (!grpo) return undefined;
  if (config.data.prompts === 0) return "field 'data.prompts': the grpo stage trains on prompts; give their number (> 0)";
  const names = [...grpo.arms.map((arm) => arm.name), ...(config.baseline ? [config.baseline.name] : [])];
  const repeated = names.find((name, index) => names.indexOf(name) !== index || name === "pre" || name === "base");
  if (repeated)
    return `field 'grpo.arms': the name '${repeated}' is used twice or is 'pre' or 'base' (the SFT and base models' labels); give every arm its own name`;
  if (grpo.arms.some((arm) => arm.init === "baseline") && !config.baseline)
    return "field 'grpo.arms.init': 'baseline' starts GRPO from the filtered-SFT model; add a `baseline`";
  if (!grpo.arms.some((arm) => armKind(arm) === "grpo"))
    return "field 'grpo.arms': every arm has a reward transform or an env config; at least one arm must train on the environment's reward";
  const set = ARM_FLAGS.find((flag) => flag in grpo.flags);
  if (set) return `field 'grpo.flags.${set}': the pipeline sets --${set} for each arm; give seeds and transforms in 'grpo.arms'`;
  const curve = grpo.curve;
  const last = Number(grpo.flags["max-steps"]);
  if (curve && !(Number.isInteger(last) && last > curve.every))
    return "field 'grpo.curve.every': a curve needs 'grpo.flags.max-steps' greater than 'every' (points: the SFT model, each checkpoint, the final model: at least 3)";
  if (curve && rows && !rows.includes(curve.benchmark))
    return `field 'grpo.curve.benchmark': '${curve.benchmark}' is not a row of eval.suite (${rows.join(", ")})`;
  return undefined;
}

export function parsePipelineConfig(value: unknown, source: string): PipelineConfig {
  const parsed = pipelineConfigSchema.safeParse(value);
  if (parsed.success) {
    const { base } = parsed.data;
    const corpusNeeded = base.kind === "tiny-qwen3" && (base.vocabularySize !== undefined || base.pretrainSteps > 0);
    if (corpusNeeded && !playsTrajectories(parsed.data))
      throw new DataError({
        code: "PIPELINE_CONFIG_INVALID",
        file: source,
        message:
          "fields 'base.vocabularySize' and 'base.pretrainSteps' learn from the SFT trajectories, so they need `sft`, `data.policies` and `data.episodes` > 0",
      });
    const problem = crossFieldProblem(parsed.data);
    if (problem) throw new DataError({ code: "PIPELINE_CONFIG_INVALID", file: source, message: problem });
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
