import { UsageError } from "../core/index.ts";
import { parsePipelineConfig, type PipelineConfig } from "./config.ts";

/** The seed's LoRA targets: every attention and MLP projection of Qwen3. */
const ALL_PROJECTIONS = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj";

/**
 * `seed`: the seed card. Qwen/Qwen3-4B, no SFT, LoRA r=32 alpha=64 on all projections, 250 steps of 8
 * prompts x 4 accumulation = 32 completions per step (4 groups of 8), vLLM colocate generation, thinking off;
 * evaluated with the `seed-card` suite at the seed's n behind `vllm serve` (hermes tool-call parser).
 */
const seed = {
  preset: "seed",
  description: "The seed card on one GPU: Qwen/Qwen3-4B, GRPO with LoRA on search_plan_act, evaluated with the seed-card suite behind vllm serve.",
  env: "search_plan_act",
  envConfig: {},
  base: { kind: "model", model: "Qwen/Qwen3-4B" },
  data: { policies: [], episodes: 0, prompts: 4096, promptSeed: 0 },
  eval: {
    engine: "vllm",
    suite: "seed-card",
    dataDir: "data",
    temperature: 0,
    maxTokens: 4096,
    concurrency: 64,
    chatTemplateKwargs: { enable_thinking: false },
    serverArgs: ["--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--max-model-len", "32768"],
  },
  grpo: {
    launcher: [],
    noSignalSteps: 10,
    flags: {
      "max-steps": 250,
      "per-device-batch-size": 8,
      "gradient-accumulation-steps": 4,
      "num-generations": 8,
      "learning-rate": 1e-5,
      beta: 0,
      temperature: 1,
      "max-completion-length": 4096,
      "lora-r": 32,
      "lora-alpha": 64,
      "lora-target-modules": ALL_PROJECTIONS,
      "use-vllm": true,
      "vllm-mode": "colocate",
      "vllm-gpu-memory-utilization": 0.3,
      "enable-thinking": false,
      bf16: true,
      "gradient-checkpointing": true,
      "save-steps": 50,
    },
  },
};

/**
 * A small world: one-hop updates in 15 records keep prompts short enough for a CPU model, and half of them name
 * the field outright, which a 2-layer model learns where a lookup's field choice stayed at chance (the
 * tiny-preset choice, see README).
 */
const smallWorld = {
  worldSize: 15,
  minHops: 1,
  maxHops: 1,
  impossibleRate: 0,
  familyWeights: { lookup: 0, update: 1, link: 0, copy: 0, conditional: 0, composite: 0 },
};

/**
 * The pilot of each environment of the tiny suite that does nothing useful: declines the task, answers nothing,
 * turns on the spot (its score is the card's do-nothing floor).
 */
const SEARCH_PLAN_DO_NOTHING = {
  search_plan_act: "always_impossible",
  search_plan_ood: "always_impossible",
  musique: "empty_answer",
  "2wiki": "empty_answer",
  babyai: "spin_in_place",
};

/**
 * `smoke`: every stage for real and as small as it goes (plumbing, not learning): a random tiny Qwen3, two
 * SFT steps, two eval episodes per row, two GRPO steps of one group of two completions, in two arms (the
 * environment's reward and its shuffled-within-group control) with a checkpoint at step 1 for the curve, the
 * filtered-SFT baseline and a sampled evaluation.
 */
const smoke = {
  preset: "smoke",
  description: "Every stage, a few steps each, on CPU (CI): plumbing, not learning.",
  env: "search_plan_act",
  envConfig: smallWorld,
  base: { kind: "tiny-qwen3" },
  data: { policies: ["oracle", "noisy_oracle_0.3"], episodes: 2, seed: 1, maxTokens: 2048, prompts: 4, promptSeed: 2 },
  sft: {
    "use-cpu": true,
    "max-steps": 2,
    "per-device-batch-size": 1,
    "gradient-accumulation-steps": 1,
    "learning-rate": 1e-4,
    "lr-scheduler-type": "constant",
    "warmup-ratio": 0,
    "max-length": 2048,
    "logging-steps": 1,
  },
  eval: {
    engine: "transformers",
    suite: [{ benchmark: "search_plan_act", env: "search_plan_act", config: smallWorld, split: "eval", n: 2, seed: 0, metrics: ["reward", "outcome"] }],
    temperature: 0,
    maxTokens: 24,
    maxTurns: 2,
    concurrency: 2,
    seeds: { dev: 0, test: 1 },
    floors: { doNothing: SEARCH_PLAN_DO_NOTHING },
  },
  grpo: {
    launcher: [],
    // A random model gets no reward variance; the smoke run checks plumbing, so the signal check is off.
    noSignalSteps: 0,
    flags: {
      "use-cpu": true,
      "use-vllm": false,
      "max-steps": 2,
      "per-device-batch-size": 2,
      "gradient-accumulation-steps": 1,
      "num-generations": 2,
      temperature: 0.7,
      "top-p": 0.8,
      "top-k": 20,
      "max-completion-length": 32,
      "max-tool-calling-iterations": 2,
      "lora-r": 8,
      "lora-alpha": 16,
      "learning-rate": 1e-4,
      "save-steps": 1000,
    },
    arms: [
      { name: "grpo", seed: 0 },
      { name: "shuffled", seed: 0, transform: "shuffle_within_group" },
    ],
    curve: { every: 1, benchmark: "search_plan_act", n: 2 },
  },
  baseline: { name: "filtered-sft", minReward: 0.9 },
  sampled: { benchmarks: ["search_plan_act"], n: 2, samples: 2, temperature: 1 },
};

/**
 * `tiny`: the CPU learning run (design and measured result: README "The tiny preset"). A tiny Qwen3 with a
 * small BPE vocabulary trained on the scripted trajectories, taught in-context copying on random spans, then
 * pretrained on the trajectories as a causal LM, SFT on every assistant turn of an imperfect teacher's
 * trajectories, then GRPO with full weights; held-out eval tasks (n = 200) pre and post.
 */
const tiny = {
  preset: "tiny",
  description:
    "CPU learning run: tiny Qwen3 (domain vocabulary, pretrained on trajectories), SFT to partial competence on a small search_plan_act world, then GRPO; held-out eval n=200.",
  env: "search_plan_act",
  envConfig: smallWorld,
  // Without the copying steps the model never copied a held-out id (0 of 40 after 1,200 pretraining steps); with them, 37 of 40.
  // Seed 1: on this vocabulary seed 0's copying stalled at 0.68 by step 3,000 and the SFT model scored 0 of 200.
  base: { kind: "tiny-qwen3", hiddenSize: 128, layers: 2, vocabularySize: 4096, inductionSteps: 3000, pretrainSteps: 600, seed: 1 },
  // 9,000 conversations: with 900, pretraining memorised them (loss 0.14) and copied no held-out name.
  // The teacher is imperfect on purpose (README "The tiny preset"): most demonstrations solve the task and then
  // change one field nobody asked about, which the reward's collateral rule halves; the rest are the oracle
  // with wrong but honest moves. SFT imitates the habit, and GRPO has to learn from the reward to drop it.
  data: {
    policies: ["oracle_plus_collateral", "noisy_oracle_0.3"],
    episodes: 4500,
    seed: 1,
    // Keeps the collateral demonstrations (reward 0.475) and drops the noisy oracle's failures (reward 0)
    minReward: 0.45,
    maxTokens: 1024,
    prompts: 1024,
    promptSeed: 2,
  },
  sft: {
    "use-cpu": true,
    "max-steps": 1000,
    "per-device-batch-size": 8,
    "gradient-accumulation-steps": 1,
    "learning-rate": 1e-3,
    "lr-scheduler-type": "cosine",
    "warmup-ratio": 0.05,
    "max-length": 1024,
    "logging-steps": 25,
  },
  eval: {
    engine: "transformers",
    suite: [
      { benchmark: "search_plan_act", env: "search_plan_act", config: smallWorld, split: "eval", n: 200, seed: 0, metrics: ["reward", "outcome"] },
      { benchmark: "search_plan_ood", env: "search_plan_ood", config: {}, n: 10, seed: 0, metrics: ["reward"] },
      { benchmark: "musique", env: "musique", config: {}, n: 8, seed: 0 },
      { benchmark: "2wiki", env: "2wiki", config: {}, n: 8, seed: 0 },
      { benchmark: "babyai", env: "babyai", config: {}, n: 5, seed: 0 },
    ],
    temperature: 0,
    maxTokens: 64,
    maxTurns: 4,
    concurrency: 2,
    // Seed 0 is the one every choice of the experiment log was judged on (docs/training.md): the curves stay on it,
    // and the final comparison runs once on seed 1's tasks.
    seeds: { dev: 0, test: 1 },
    floors: { doNothing: SEARCH_PLAN_DO_NOTHING },
  },
  grpo: {
    launcher: [],
    noSignalSteps: 10,
    flags: {
      "use-cpu": true,
      "use-vllm": false,
      "max-steps": 150,
      "per-device-batch-size": 16,
      "gradient-accumulation-steps": 1,
      // Two groups of 8: the copy and format errors of a 2-layer model are nearly all-or-nothing per task, so
      // larger groups find variance
      "num-generations": 8,
      // TRL's default sampling (temperature 1, the whole distribution). Under Qwen3's non-thinking recommendation
      // (0.7, top-p 0.8, top-k 20) 85% of groups of 8 had no reward variance and the held-out mean did not move.
      temperature: 1,
      // An update's four calls with their results take up to ~440 tokens in this vocabulary
      "max-completion-length": 512,
      // search, update, the collateral update, finish: the eval's four turns
      "max-tool-calling-iterations": 4,
      "lora-r": 0,
      // 5e-4 raised the policy's entropy and lowered its reward within 100 steps
      "learning-rate": 2e-4,
      "save-steps": 1000,
    },
    // Two seeds on the environment's reward, and the control: the same seed as the first with each group's rewards
    // permuted, so the same prompts, sampling and reward distribution reach it without which completion earned what
    arms: [
      { name: "grpo-s0", seed: 0 },
      { name: "grpo-s1", seed: 1 },
      { name: "shuffled", seed: 0, transform: "shuffle_within_group" },
      // Filter, then RL: GRPO from the filtered-SFT model answers whether the reward adds anything to filtering
      { name: "grpo-from-filtered", seed: 0, init: "baseline" },
      // The reward-hacking watch's positive control: a reward without its outcome term that pays for brevity
      // (reckless_guess games it); the watch must flag this arm and not the others (docs/training.md "The watch")
      { name: "exploit", seed: 0, envConfig: { reward: "without_outcome" } },
    ],
    curve: { every: 50, benchmark: "search_plan_act", n: 50 },
  },
  // The cheap alternative: SFT from the same base on the demonstrations that earned (nearly) full reward, which drops
  // the collateral-write habit (those score 0.475) without any RL
  baseline: { name: "filtered-sft", minReward: 0.9 },
  sampled: { benchmarks: ["search_plan_act"], n: 50, samples: 4, temperature: 1 },
};

/** The customer-as-a-tool protocol: what TRL's loop can train and `toolgym serve` serves (docs/tau2.md). */
const customerTool = { customer: "tool" };

/** tau2's do-nothing pilot: closes the conversation at once without a tool call. */
const TAU2_DO_NOTHING = { tau2_mock: "do_nothing_stop", tau2_retail: "do_nothing_stop", tau2_telecom: "do_nothing_stop" };

/**
 * `tau2-smoke`: the Tau2 card's stages for real and tiny (plumbing, not learning): the scripted oracle's
 * conversations on two tau2_mock tasks exported as AReaL lines, `sft tau2` rows for a random tiny Qwen3, two SFT
 * steps, then the base and SFT models evaluated with two trials per task (pass^1, pass^2) and the card.
 */
const tau2Smoke = {
  preset: "tau2-smoke",
  description: "The Tau2 card's stages, a few steps each, on CPU (CI): tau2_mock, a random tiny Qwen3, the scripted user. Plumbing, not learning.",
  env: "tau2_mock",
  envConfig: customerTool,
  base: { kind: "tiny-qwen3" },
  data: {
    policies: ["oracle"],
    maxTokens: 2048,
    tau2: { sources: [{ env: "tau2_mock", split: "base", n: 2, config: customerTool }], enableThinking: false },
  },
  sft: smoke.sft,
  eval: {
    engine: "transformers",
    suite: [{ benchmark: "tau2_mock", env: "tau2_mock", config: customerTool, split: "base", n: 2, seed: 300, metrics: ["reward", "pass"] }],
    trials: 2,
    base: true,
    temperature: 0,
    maxTokens: 24,
    maxTurns: 3,
    concurrency: 2,
    floors: { doNothing: TAU2_DO_NOTHING },
  },
};

/**
 * `tau2`: the Tau2 card on CPU (design and sizing: docs/tau2.md "The tau2 pipeline"). A tiny Qwen3 with a
 * vocabulary learnt from the scripted oracle's train-split conversations on mock, retail and telecom (customer
 * as a tool), taught in-context copying and pretrained on them, SFT on their `sft tau2` rows, then the base and
 * SFT models on the held-out test splits (mock has one split, so its row measures the trained tasks) with trials.
 */
const tau2Cpu = {
  preset: "tau2",
  description:
    "The Tau2 SFT card on CPU: tiny Qwen3 SFT'd on the scripted oracle's train-split tau2 conversations (mock, retail, telecom; customer as a tool), evaluated on the test splits with trials and pass^k.",
  env: "tau2_mock",
  envConfig: customerTool,
  base: { kind: "tiny-qwen3", hiddenSize: 128, layers: 2, vocabularySize: 4096, inductionSteps: 1000, pretrainSteps: 200, seed: 1 },
  data: {
    policies: ["oracle"],
    maxTokens: 4096,
    tau2: {
      sources: [
        { env: "tau2_mock", split: "base", n: 10, config: customerTool },
        { env: "tau2_retail", split: "train", n: 74, config: customerTool },
        { env: "tau2_telecom", split: "train", n: 74, config: customerTool },
      ],
      enableThinking: false,
    },
  },
  sft: {
    "use-cpu": true,
    "max-steps": 300,
    "per-device-batch-size": 4,
    "gradient-accumulation-steps": 1,
    "learning-rate": 1e-3,
    "lr-scheduler-type": "cosine",
    "warmup-ratio": 0.05,
    "max-length": 4096,
    "logging-steps": 25,
  },
  eval: {
    engine: "transformers",
    suite: [
      { benchmark: "tau2_mock", env: "tau2_mock", config: customerTool, split: "base", n: 10, seed: 300, metrics: ["reward", "pass"] },
      { benchmark: "tau2_retail", env: "tau2_retail", config: customerTool, split: "test", n: 10, seed: 300, metrics: ["reward", "pass"] },
      { benchmark: "tau2_telecom", env: "tau2_telecom", config: customerTool, split: "test", n: 10, seed: 300, metrics: ["reward", "pass"] },
    ],
    trials: 2,
    base: true,
    temperature: 0,
    maxTokens: 96,
    // No turn cap of our own: tau2's limits (max_steps 200, max_errors 10) end a conversation, as in tau2. An 8-turn
    // cap held the scripted oracle itself under 1.0 on retail, so the card measured the cap.
    concurrency: 2,
    floors: { doNothing: TAU2_DO_NOTHING },
  },
};

/** tau2's leaderboard user simulator and NL-assertion judge (tau2 `config.py`: DEFAULT_LLM_USER, DEFAULT_LLM_NL_ASSERTIONS). */
const TAU2_LEADERBOARD_MODEL = "gpt-4.1-2025-04-14";

/**
 * `tau2-seed`: the Tau2 SFT card on a GPU. MMOPD/Qwen3-4B-OT3-2ep (Qwen3-4B-Base fine-tuned on OpenThoughts3, a
 * thinking model; its sibling MMOPD/Qwen3-1.7B-OT3-2ep takes the same recipe), SFT on AReaL-tau2-data's
 * tau2_sft_train.jsonl (33,531 examples, one assistant turn each, every trajectory whatever its outcome) as
 * `sft tau2` builds the rows (thinking on, 32,768 tokens), TRL's SFTTrainer in bf16 with TRL's own defaults for
 * what the card does not state (learning rate, epochs, batch size); evaluated as a thinking model behind vLLM's
 * qwen3 reasoning parser (the customer and the judge see only the reply), tau2's leaderboard protocol, user and
 * judge, 4 trials per test task at temperature 0 (tau2's defaults).
 */
const tau2Seed = {
  preset: "tau2-seed",
  description:
    "The Tau2 SFT card on one GPU: MMOPD/Qwen3-4B-OT3-2ep SFT on AReaL-tau2-data tau2_sft_train.jsonl (33,531 examples, one assistant turn each, every trajectory regardless of outcome; rows as `sft tau2` builds them: thinking enabled, 32,768-token context), TRL SFTTrainer on pretokenized input_ids/labels in bf16 with TRL's defaults for learning rate, epochs and batch size (the card states none: --trl-defaults); evaluated on the tau2 test splits as a thinking model (vLLM's qwen3 reasoning parser keeps the reasoning from the customer and the judge), leaderboard protocol, user simulator and judge gpt-4.1-2025-04-14 (--user-model/--judge-model: where it is served), 4 trials, pass^k.",
  env: "tau2_retail",
  base: { kind: "model", model: "MMOPD/Qwen3-4B-OT3-2ep" },
  data: {
    maxTokens: 32768,
    tau2: { file: "tau2_sft_train.jsonl", hub: "inclusionAI/AReaL-tau2-data", enableThinking: true },
  },
  sft: { "trl-defaults": true, bf16: true, "max-length": 32768, "gradient-checkpointing": true },
  eval: {
    engine: "vllm",
    suite: [
      { benchmark: "tau2_retail", env: "tau2_retail", split: "test", n: 40, seed: 300, metrics: ["reward", "pass"] },
      { benchmark: "tau2_telecom", env: "tau2_telecom", split: "test", n: 40, seed: 300, metrics: ["reward", "pass"] },
    ],
    trials: 4,
    temperature: 0,
    maxTokens: 8192,
    concurrency: 32,
    floors: { doNothing: TAU2_DO_NOTHING },
    chatTemplateKwargs: { enable_thinking: true },
    userModel: `http://127.0.0.1:8001/v1#${TAU2_LEADERBOARD_MODEL}`,
    judgeModel: `http://127.0.0.1:8001/v1#${TAU2_LEADERBOARD_MODEL}`,
    serverArgs: ["--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--reasoning-parser", "qwen3", "--max-model-len", "32768"],
  },
};

const PRESETS: Record<string, unknown> = { seed, smoke, tiny, "tau2-smoke": tau2Smoke, tau2: tau2Cpu, "tau2-seed": tau2Seed };
export const PRESET_NAMES = Object.keys(PRESETS);

export function presetConfig(name: string): PipelineConfig {
  const preset = PRESETS[name];
  if (!preset) throw new UsageError({ code: "PRESET_UNKNOWN", message: `unknown preset '${name}'; presets: ${PRESET_NAMES.join(", ")}` });
  return parsePipelineConfig(preset, `preset ${name}`);
}
