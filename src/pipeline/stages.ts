import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { join } from "node:path";
import { requireBuiltinSuite } from "../eval/suites/builtin.ts";
import { parseSuite, type Suite, type SuiteRow } from "../eval/suites/suite.ts";
import { evaluatesPerRow, playsTrajectories, type Arm, type PipelineConfig, type StageName } from "./config.ts";
import { GrpoSignalMonitor } from "./grpo-signal.ts";
import { PACKAGE_ROOT, modelServerCommand } from "./processes.ts";
import { writeEvidence } from "./card.ts";
import { curveSteps, evidenceLayout, initLabel, modelPaths } from "./layout.ts";
import { getPolicies } from "../envs/registry.ts";
import type { Step } from "./steps.ts";
import { hubDatasetSteps, hubTokenizerStep, tau2ConversationSteps, tau2DataPaths, tau2RowsStep } from "./tau2-data.ts";

/** What a stage's steps are derived from: the config, where things go and the Python that runs the recipes. */
export interface PlanContext {
  config: PipelineConfig;
  /** The pipeline's output directory. */
  out: string;
  python: string;
}

export interface Stage {
  name: StageName;
  /** Why the stage does not apply to this config (it is then recorded as skipped). */
  skipReason(config: PipelineConfig): string | undefined;
  /** The stage's steps: the dry run prints them and the run executes them, so the two cannot differ. */
  steps(context: PlanContext): Step[];
}

function flagArgs(flags: Record<string, string | number | boolean>): string[] {
  return Object.entries(flags).flatMap(([name, value]) => (value === true ? [`--${name}`] : value === false ? [`--no-${name}`] : [`--${name}`, String(value)]));
}

const dataPaths = (out: string) => ({
  trajectories: join(out, "data", "trajectories"),
  corpus: join(out, "data", "tokenizer-corpus.jsonl"),
  rows: join(out, "data", "sft.jsonl"),
  baselineRows: join(out, "data", "sft-baseline.jsonl"),
  prompts: join(out, "data", "prompts.parquet"),
});

/** A tiny model whose vocabulary or pretraining learns from the SFT trajectories is built after them. */
const usesCorpus = (config: PipelineConfig) =>
  config.base.kind === "tiny-qwen3" && (config.base.vocabularySize !== undefined || config.base.pretrainSteps > 0) && playsTrajectories(config);

function tinyModelStep({ config, python, out }: PlanContext): Step {
  const base = config.base;
  if (base.kind !== "tiny-qwen3") throw new Error("not a tiny model");
  const parts = [
    "random weights",
    base.vocabularySize ? "a BPE vocabulary trained on the trajectories" : "the real Qwen3 tokenizer",
    ...(base.inductionSteps ? [`up to ${base.inductionSteps} steps copying random spans`] : []),
    ...(base.pretrainSteps ? [`${base.pretrainSteps} steps pretrained on the trajectories`] : []),
    "Qwen3's chat template",
  ];
  const argv = [python, join(PACKAGE_ROOT, "scripts/make-tiny-qwen3.py"), modelPaths(config, out).base];
  argv.push("--hidden-size", String(base.hiddenSize), "--layers", String(base.layers));
  if (usesCorpus(config)) argv.push("--corpus", dataPaths(out).corpus);
  if (base.vocabularySize) argv.push("--vocab-size", String(base.vocabularySize));
  if (base.inductionSteps > 0) argv.push("--induction-steps", String(base.inductionSteps));
  if (base.pretrainSteps > 0) argv.push("--pretrain-steps", String(base.pretrainSteps));
  if (base.seed !== 0) argv.push("--seed", String(base.seed));
  return { kind: "command", argv, note: `building the tiny Qwen3 (${parts.join(", ")})` };
}

function sftRowsStep(context: PlanContext, output: string, minReward: number | undefined): Step {
  const { config, out } = context;
  const args = ["sft", "trajectories", dataPaths(out).trajectories, "--model-dir", modelPaths(config, out).base, "--out", output];
  args.push("--max-tokens", String(config.data.maxTokens), "--enable-thinking", "false");
  if (minReward !== undefined) args.push("--min-reward", String(minReward));
  return {
    kind: "toolgym",
    args,
    note: `SFT rows${minReward !== undefined ? ` (reward ≥ ${minReward})` : ""}: every assistant turn, double-rendered and prefix-checked`,
  };
}

const dataStage: Stage = {
  name: "data",
  skipReason: () => undefined,
  steps(context) {
    const { config, out } = context;
    const paths = dataPaths(out);
    const steps: Step[] = [];
    const envConfig = JSON.stringify(config.envConfig);
    if (config.base.kind === "tiny-qwen3" && !usesCorpus(config)) steps.push(tinyModelStep(context));
    if (config.data.tau2) {
      steps.push(...hubDatasetSteps(config, context.python, out), ...tau2ConversationSteps(config, out, paths.trajectories));
      if (usesCorpus(config)) {
        steps.push({ kind: "toolgym", args: ["sft", "conversations", paths.trajectories, "--out", paths.corpus], note: "tokenizer corpus" });
        steps.push(tinyModelStep(context));
      }
      const base = config.base;
      // A hub id has no local tokenizer directory to build rows with: its tokenizer files are downloaded first.
      const hub = base.kind === "model" && !existsSync(base.model);
      if (hub) steps.push(hubTokenizerStep(context.python, base.model, out));
      const tokenizer = hub ? tau2DataPaths(out).tokenizer : modelPaths(config, out).base;
      steps.push(tau2RowsStep(config, { out, tokenizer, rows: paths.rows }));
    } else if (config.sft) {
      for (const policy of config.data.policies) {
        const args = [
          "eval",
          "--env",
          config.env,
          "--agent",
          policy,
          "--split",
          "train",
          "--seed",
          String(config.data.seed),
          "--n",
          String(config.data.episodes),
        ];
        args.push("--config", envConfig, "--out", paths.trajectories, "--quiet");
        steps.push({ kind: "toolgym", args, note: `scripted trajectories: ${policy} × ${config.data.episodes} (train split)` });
      }
      if (usesCorpus(config)) {
        steps.push({ kind: "toolgym", args: ["sft", "conversations", paths.trajectories, "--out", paths.corpus], note: "tokenizer corpus" });
        steps.push(tinyModelStep(context));
      }
      steps.push(sftRowsStep(context, paths.rows, config.data.minReward));
      if (config.baseline) steps.push(sftRowsStep(context, paths.baselineRows, config.baseline.minReward));
    }
    if (!config.grpo) return steps;
    const args = ["dataset", config.env, "--split", config.data.promptSplit, "--seed", String(config.data.promptSeed), "--n", String(config.data.prompts)];
    steps.push({ kind: "toolgym", args: [...args, "--config", envConfig, "--out", paths.prompts], note: `${config.data.prompts} GRPO prompts` });
    return steps;
  },
};

function sftStep({ config, out, python }: PlanContext, options: { dataset: string; output: string; seed?: number }): Step {
  const flags = { ...(config.sft ?? {}), ...(options.seed !== undefined ? { seed: options.seed } : {}) };
  const argv = [python, join(PACKAGE_ROOT, "python/train_sft.py"), "--model", modelPaths(config, out).base, "--dataset", options.dataset];
  return { kind: "command", argv: [...argv, "--output-dir", options.output, ...flagArgs(flags)], note: "python/train_sft.py" };
}

const sftStage: Stage = {
  name: "sft",
  skipReason: (config) => (config.sft ? undefined : "the preset starts GRPO from the base model"),
  steps: (context) => [sftStep(context, { dataset: dataPaths(context.out).rows, output: modelPaths(context.config, context.out).sft })],
};

const baselineStage: Stage = {
  name: "baseline",
  skipReason: (config) => (config.baseline ? undefined : "no `baseline` in the config"),
  steps(context) {
    const baseline = context.config.baseline!;
    const step = sftStep(context, {
      dataset: dataPaths(context.out).baselineRows,
      output: modelPaths(context.config, context.out).baseline,
      seed: baseline.seed,
    });
    return [{ ...step, note: `python/train_sft.py on the demonstrations with reward ≥ ${baseline.minReward} (the non-RL baseline)` }];
  },
};

/** The suite a config evaluates with. */
export function pipelineSuite(config: PipelineConfig): Suite {
  if (typeof config.eval.suite === "string") return requireBuiltinSuite(config.eval.suite, config.eval.dataDir ? { dataDir: config.eval.dataDir } : {});
  const test = config.eval.seeds?.test;
  const rows = test === undefined ? config.eval.suite : config.eval.suite.map((row) => ({ ...row, seed: test }));
  return parseSuite({ name: `pipeline-${config.preset}`, description: `The ${config.preset} pipeline's evaluation.`, rows });
}

const SERVER_URL = "http://127.0.0.1:PORT/v1";

/** tau2's user simulator and judge: per-environment options, so only rows run one by one take them. */
function simulatorArgs(config: PipelineConfig): string[] {
  const { userModel, judgeModel } = config.eval;
  return [...(userModel ? ["--user-model", userModel] : []), ...(judgeModel ? ["--judge-model", judgeModel] : [])];
}

/** `toolgym eval` options every evaluation of a model shares (the generation path). */
function generationArgs(config: PipelineConfig, label: string, model: string, temperature: number): string[] {
  const settings = config.eval;
  const args = ["--model", `${label}=${SERVER_URL}#${model}`, "--temperature", String(temperature), "--max-tokens", String(settings.maxTokens)];
  args.push("--chat-template-kwargs", JSON.stringify(settings.chatTemplateKwargs), "--concurrency", String(settings.concurrency));
  if (settings.maxTurns) args.push("--max-turns", String(settings.maxTurns));
  // One retry: a local server that fails twice is broken, not busy; the episode is then recorded as errored.
  return [...args, "--max-retries", "1", "--no-preflight", "--quiet"];
}

/** One suite row on `n` tasks (a learning-curve point or a sampled evaluation). */
function rowEvalStep(
  config: PipelineConfig,
  row: SuiteRow,
  options: { label: string; model: string; n: number; out: string; samples?: number; temperature?: number; note: string },
): Step {
  const args = [
    "eval",
    "--env",
    row.env,
    "--config",
    JSON.stringify(row.config),
    ...(row.split ? ["--split", row.split] : []),
    "--seed",
    String(row.seed),
    "--n",
    String(options.n),
  ];
  if (options.samples && options.samples > 1) args.push("--num-trials", String(options.samples));
  args.push(
    ...simulatorArgs(config),
    ...generationArgs(config, options.label, options.model, options.temperature ?? config.eval.temperature),
    "--out",
    options.out,
  );
  return { kind: "toolgym", args, note: options.note };
}

function suiteRow(config: PipelineConfig, benchmark: string): SuiteRow {
  const row = pipelineSuite(config).rows.find((candidate) => candidate.benchmark === benchmark);
  if (!row) throw new Error(`no suite row '${benchmark}'`); // config.ts checks explicit suites
  return row;
}

/** A suite row on the development seed (learning curves), when the config names one. */
function devRow(config: PipelineConfig, benchmark: string): SuiteRow {
  const row = suiteRow(config, benchmark);
  const dev = config.eval.seeds?.dev;
  return dev === undefined ? row : { ...row, seed: dev };
}

/** The steps evaluating one model: the suite, curve points (curve), sampled rows; run inside a server (`servedModels`). */
function evalModelSteps(context: PlanContext, stage: "eval-pre" | "eval-post", label: string, model: string, extra: Step[]): ServedModel {
  const { config, out } = context;
  const layout = evidenceLayout(out);
  const suiteFile = typeof config.eval.suite === "string" ? config.eval.suite : join(out, stage, "suite.json");
  const suiteArgs = ["eval", "--suite", suiteFile, ...generationArgs(config, label, model, config.eval.temperature)];
  if (config.eval.dataDir) suiteArgs.push("--data-dir", config.eval.dataDir);
  const suite = pipelineSuite(config);
  const trials = config.eval.trials;
  // Trials and tau2's user simulator are options of one environment's run, so such a suite runs row by row.
  const suiteSteps: Step[] = evaluatesPerRow(config)
    ? suite.rows.map((row) => {
        const note = `${label}: ${row.benchmark} n=${row.n}${trials > 1 ? ` × ${trials} trials` : ""}`;
        return rowEvalStep(config, row, { label, model, n: row.n, samples: trials, out: layout.suiteRuns(stage, label), note });
      })
    : [
        {
          kind: "toolgym",
          args: [...suiteArgs, "--out", layout.suiteRuns(stage, label)],
          note: `${label}: suite ${suite.name}: ${suite.rows.map((row) => `${row.benchmark} n=${row.n}`).join(", ")}`,
        },
      ];
  const steps: Step[] = [...suiteSteps, ...extra];
  for (const benchmark of config.sampled?.benchmarks ?? []) {
    const { n, samples, temperature } = config.sampled!;
    const note = `${label}: ${benchmark} sampled, ${samples} per task at temperature ${temperature}`;
    steps.push(rowEvalStep(config, suiteRow(config, benchmark), { label, model, n, samples, temperature, out: layout.sampled(stage, label), note }));
  }
  return { model, steps };
}

/** A model and the evaluation steps that ask the server for it by name (`--model LABEL=URL#MODEL`). */
interface ServedModel {
  model: string;
  steps: Step[];
}

/**
 * The server steps that run a stage's evaluations. vLLM serves the one model it is started with, so each
 * model gets its own server. transformers serve loads a model by the request's `model` field when it is
 * started without one (python/serve_transformers.py), so every model of the stage shares one server: one
 * torch start-up instead of one per model and checkpoint, with the same requests, models and generation
 * settings. Sampled evaluations draw from that server's torch generator, seeded once at its start (as each
 * per-model server's was): the same sampling, another stream of draws (concurrent requests interleave it anyway).
 */
function servedModels(context: PlanContext, models: readonly ServedModel[]): Step[] {
  const { config, python } = context;
  const engine = config.eval.engine;
  const probe = engine === "vllm" ? "/v1/models" : "/health";
  const server = (model: string | undefined, note: string, steps: Step[]): Step => {
    const argv = modelServerCommand(engine, python, model, "PORT", config.eval.serverArgs);
    return { kind: "server", argv, placeholder: "PORT", probe, note, steps };
  };
  if (engine === "vllm") return models.map((served) => server(served.model, `vllm serve ${served.model}`, served.steps));
  if (models.length === 0) return [];
  const note = `transformers serve for ${models.length} model${models.length > 1 ? "s" : ""}, each loaded when its evaluation first asks for it`;
  return [
    server(
      undefined,
      note,
      models.flatMap((served) => served.steps),
    ),
  ];
}

function suiteFileStep(config: PipelineConfig, out: string, stage: string): Step[] {
  if (typeof config.eval.suite === "string") return [];
  const path = join(out, stage, "suite.json");
  return [
    {
      kind: "library",
      note: `the evaluation suite as a file (${path})`,
      run: () => writeFileSync(path, `${JSON.stringify(pipelineSuite(config), null, 2)}\n`),
    },
  ];
}

/** A learning-curve point: `label`'s model at `step` on the curve's row (the pre model is every arm's step 0). */
function curvePoint(context: PlanContext, label: string, step: number, model: string): Step {
  const { config, out } = context;
  const curve = config.grpo!.curve!;
  const note = `${label} at step ${step}: ${curve.benchmark} n=${curve.n}`;
  return rowEvalStep(config, devRow(config, curve.benchmark), { label, model, n: curve.n, out: evidenceLayout(out).curve(label, step), note });
}

/**
 * The floors: each of a row's environment's scripted pilots on the row's tasks, with the same turn limit and
 * trials as the models (no server: they play in-process).
 */
function floorSteps({ config, out }: PlanContext): Step[] {
  return pipelineSuite(config).rows.flatMap((row) =>
    getPolicies(row.env)
      .filter((policy) => policy.kind === "pilot")
      .map((policy): Step => {
        const args = ["eval", "--env", row.env, "--agent", policy.id, "--config", JSON.stringify(row.config), ...(row.split ? ["--split", row.split] : [])];
        args.push("--seed", String(row.seed), "--n", String(row.n), ...simulatorArgs(config));
        if (config.eval.trials > 1) args.push("--num-trials", String(config.eval.trials));
        if (config.eval.maxTurns) args.push("--max-turns", String(config.eval.maxTurns));
        args.push("--out", evidenceLayout(out).floors(row.benchmark), "--quiet");
        return { kind: "toolgym", args, note: `floor: ${policy.id} on ${row.benchmark} n=${row.n}` };
      }),
  );
}

const evalPreStage: Stage = {
  name: "eval-pre",
  skipReason: () => undefined,
  steps(context) {
    const models = modelPaths(context.config, context.out);
    const curve = context.config.grpo?.curve ? [curvePoint(context, "pre", 0, models.pre)] : [];
    const base = context.config.eval.base ? [evalModelSteps(context, "eval-pre", "base", models.base, [])] : [];
    const served = [...base, evalModelSteps(context, "eval-pre", "pre", models.pre, curve)];
    return [...suiteFileStep(context.config, context.out, "eval-pre"), ...servedModels(context, served), ...floorSteps(context)];
  },
};

function grpoCommand(context: PlanContext, arm: Arm): string[] {
  const { out, python } = context;
  const config = context.config as PipelineConfig & { grpo: NonNullable<PipelineConfig["grpo"]> };
  const models = modelPaths(config, out);
  const launcher = config.grpo.launcher.length > 0 ? config.grpo.launcher : [python];
  const init = arm.init === "baseline" ? models.baseline : models.pre;
  const argv = [...launcher, join(PACKAGE_ROOT, "python/train_grpo.py"), "--model", init, "--dataset", dataPaths(out).prompts, "--env", config.env];
  argv.push("--server-url", "http://127.0.0.1:SERVER_PORT", "--output-dir", models.arm(arm.name), ...flagArgs(config.grpo.flags), "--seed", String(arm.seed));
  if (arm.transform) argv.push("--reward-transform", arm.transform);
  if (arm.envConfig) argv.push("--env-config", JSON.stringify({ ...config.envConfig, ...arm.envConfig }));
  if (config.grpo.curve) argv.push("--curve-steps", String(config.grpo.curve.every));
  return argv;
}

/** The training steps' logs of an arm's GRPO run (read by the summary). */
export const GRPO_STEPS_FILE = "steps.jsonl";

function grpoStep(context: PlanContext, arm: Arm): Step {
  // A constant reward has zero variance by construction: the no-signal check would stop the control it is meant to be.
  const monitor = new GrpoSignalMonitor(arm.transform === "constant" ? 0 : context.config.grpo!.noSignalSteps);
  const steps = evidenceLayout(context.out).steps(arm.name);
  return {
    kind: "command",
    argv: grpoCommand(context, arm),
    note: `${arm.name}: python/train_grpo.py from ${initLabel(context.config, arm)} (seed ${arm.seed}${arm.transform ? `, reward ${arm.transform}` : ""}${arm.envConfig ? `, env config ${JSON.stringify(arm.envConfig)}` : ""})`,
    stopCode: "GRPO_NO_SIGNAL",
    onLine(line, note) {
      const before = monitor.steps.length;
      const last = monitor.steps.at(-1);
      const verdict = monitor.feed(line);
      const step = monitor.steps.at(-1);
      if (step && (monitor.steps.length !== before || step !== last)) {
        mkdirSync(dirname(steps), { recursive: true });
        writeFileSync(steps, monitor.steps.map((entry) => `${JSON.stringify(entry)}\n`).join(""));
        note(
          `${arm.name} step ${monitor.steps.length}: reward ${Number(step.reward).toFixed(3)}, zero-variance groups ${String(step.frac_reward_zero_std)}, tool calls per completion ${String(step["tools/call_frequency"])}`,
        );
      }
      return verdict;
    },
  };
}

const grpoStage: Stage = {
  name: "grpo",
  skipReason: (config) => (config.grpo ? undefined : "no `grpo` in the config"),
  steps(context) {
    const argv = ["serve", "--host", "127.0.0.1", "--port", "SERVER_PORT"];
    const arms = context.config.grpo!.arms.map((arm) => grpoStep(context, arm));
    return [{ kind: "server", toolgym: true, argv, placeholder: "SERVER_PORT", probe: "/health", note: "toolgym serve", steps: arms }];
  },
};

const evalPostStage: Stage = {
  name: "eval-post",
  skipReason: (config) => (config.grpo || config.baseline ? undefined : "no GRPO arm or baseline to evaluate"),
  steps(context) {
    const { config, out } = context;
    const models = modelPaths(config, out);
    const served: ServedModel[] = [];
    const last = Number(config.grpo?.flags["max-steps"]);
    for (const arm of config.grpo?.arms ?? []) {
      const final = config.grpo?.curve ? [curvePoint(context, arm.name, last, models.arm(arm.name))] : [];
      served.push(evalModelSteps(context, "eval-post", arm.name, models.arm(arm.name), final));
      for (const step of curveSteps(config)) {
        const checkpoint = models.checkpoint(arm.name, step);
        served.push({ model: checkpoint, steps: [curvePoint(context, arm.name, step, checkpoint)] });
      }
    }
    // An arm started from the baseline has the baseline's model as its step 0, evaluated on the curve's tasks.
    const fromBaseline = config.baseline && config.grpo?.curve && config.grpo.arms.some((arm) => arm.init === "baseline");
    const start = fromBaseline ? [curvePoint(context, config.baseline!.name, 0, models.baseline)] : [];
    if (config.baseline) served.push(evalModelSteps(context, "eval-post", config.baseline.name, models.baseline, start));
    return [...suiteFileStep(config, out, "eval-post"), ...servedModels(context, served)];
  },
};

const cardStage: Stage = {
  name: "card",
  skipReason: () => undefined,
  steps: (context) => [
    {
      kind: "library",
      note: `the card (card.md), the HTML report (report.html) and card/report.json from the eval runs: arms, learning curves, failure categories`,
      run: () => writeEvidence(context.config, context.out),
    },
  ],
};

export const PIPELINE_STAGES: readonly Stage[] = [dataStage, sftStage, baselineStage, evalPreStage, grpoStage, evalPostStage, cardStage];
