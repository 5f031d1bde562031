import type { WriteStream } from "node:fs";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig, type AnyEnvironment } from "../core/index.ts";
import { prepareTrajectorySft, writeTrajectoryConversations } from "../data/sft/trajectories.ts";
import { ENVIRONMENTS, getEnvironment } from "../envs/registry.ts";
import type { ProgressStream } from "../eval/progress.ts";
import { createReport } from "../eval/report/index.ts";
import { runEvaluation } from "../eval/run-evaluation.ts";
import { requireBuiltinSuite } from "../eval/suites/builtin.ts";
import { runSuite } from "../eval/suites/run-suite.ts";
import { parseSuite, type Suite } from "../eval/suites/suite.ts";
import { startServer } from "../server/start-server.ts";
import { writePromptDataset } from "../training/prompt-dataset.ts";
import type { PipelineConfig, StageName } from "./config.ts";
import { GrpoSignalMonitor } from "./grpo-signal.ts";
import { PACKAGE_ROOT, PipelineError, modelServerCommand, startLogged, startModelServer, stopChild } from "./processes.ts";

export interface StageContext {
  config: PipelineConfig;
  /** The pipeline's output directory. */
  out: string;
  python: string;
  log: WriteStream;
  /** Where eval progress bars go (none when quiet). */
  progress?: ProgressStream;
  signal?: AbortSignal;
  /** One line of live progress (also written to the stage log). */
  note(text: string): void;
}

export interface Stage {
  name: StageName;
  /** Why the stage does not apply to this config (it is then recorded as skipped). */
  skipReason(config: PipelineConfig): string | undefined;
  /** The commands the stage runs, as shell lines (library steps as their CLI equivalent), for --dry-run. */
  plan(context: Omit<StageContext, "log" | "note">): string[];
  run(context: StageContext): Promise<void>;
}

const quote = (value: string) => (/^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`);
const shell = (argv: readonly string[]) => argv.map(quote).join(" ");

/** The model each stage starts from and writes. */
export function modelPaths(config: PipelineConfig, out: string) {
  const base = config.base.kind === "model" ? config.base.model : join(out, "data", "base-model");
  const sft = join(out, "sft", "model");
  return { base, sft, pre: config.sft ? sft : base, grpo: join(out, "grpo", "model") };
}

function flagArgs(flags: Record<string, string | number | boolean>): string[] {
  return Object.entries(flags).flatMap(([name, value]) => (value === true ? [`--${name}`] : value === false ? [`--no-${name}`] : [`--${name}`, String(value)]));
}

const dataPaths = (out: string) => ({
  trajectories: join(out, "data", "trajectories"),
  corpus: join(out, "data", "tokenizer-corpus.jsonl"),
  rows: join(out, "data", "sft.jsonl"),
  prompts: join(out, "data", "prompts.parquet"),
});

function environment(config: PipelineConfig): AnyEnvironment {
  return getEnvironment(config.env);
}

function tinyModelCommand(config: PipelineConfig, python: string, out: string): string[] {
  const base = config.base;
  if (base.kind !== "tiny-qwen3") return [];
  const corpus = usesCorpus(config) ? ["--corpus", dataPaths(out).corpus] : [];
  const vocabulary = base.vocabularySize ? ["--vocab-size", String(base.vocabularySize)] : [];
  const induction = base.inductionSteps > 0 ? ["--induction-steps", String(base.inductionSteps)] : [];
  const pretraining = base.pretrainSteps > 0 ? ["--pretrain-steps", String(base.pretrainSteps)] : [];
  const size = ["--hidden-size", String(base.hiddenSize), "--layers", String(base.layers)];
  const seed = base.seed !== 0 ? ["--seed", String(base.seed)] : [];
  return [
    python,
    join(PACKAGE_ROOT, "scripts/make-tiny-qwen3.py"),
    modelPaths(config, out).base,
    ...size,
    ...corpus,
    ...vocabulary,
    ...induction,
    ...pretraining,
    ...seed,
  ];
}

/** A tiny model whose vocabulary or pretraining learns from the SFT trajectories is built after them. */
const usesCorpus = (config: PipelineConfig) => config.base.kind === "tiny-qwen3" && (config.base.vocabularySize !== undefined || config.base.pretrainSteps > 0);

const dataStage: Stage = {
  name: "data",
  skipReason: () => undefined,
  plan({ config, out, python }) {
    const paths = dataPaths(out);
    const lines: string[] = [];
    if (config.base.kind === "tiny-qwen3" && !usesCorpus(config)) lines.push(shell(tinyModelCommand(config, python, out)));
    const envConfig = JSON.stringify(config.envConfig);
    if (config.sft) {
      for (const policy of config.data.policies)
        lines.push(
          shell([
            "toolgym",
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
            "--config",
            envConfig,
            "--out",
            paths.trajectories,
          ]),
        );
      if (usesCorpus(config)) {
        lines.push(shell(["toolgym", "sft", "conversations", paths.trajectories, "--out", paths.corpus]));
        lines.push(shell(tinyModelCommand(config, python, out)));
      }
      const minReward = config.data.minReward !== undefined ? ["--min-reward", String(config.data.minReward)] : [];
      lines.push(
        shell([
          "toolgym",
          "sft",
          "trajectories",
          paths.trajectories,
          "--model-dir",
          modelPaths(config, out).base,
          "--out",
          paths.rows,
          "--max-tokens",
          String(config.data.maxTokens),
          "--enable-thinking",
          "false",
          ...minReward,
        ]),
      );
    }
    lines.push(
      shell([
        "toolgym",
        "dataset",
        config.env,
        "--split",
        "train",
        "--seed",
        String(config.data.promptSeed),
        "--n",
        String(config.data.prompts),
        "--config",
        envConfig,
        "--out",
        paths.prompts,
      ]),
    );
    return lines;
  },
  async run(context) {
    const { config, out, python, log } = context;
    const paths = dataPaths(out);
    const env = environment(config);
    const buildTinyModel = async () => {
      const base = config.base.kind === "tiny-qwen3" ? config.base : undefined;
      const parts = [
        "random weights",
        base?.vocabularySize ? "a BPE vocabulary trained on the trajectories" : "the real Qwen3 tokenizer",
        ...(base?.inductionSteps ? [`up to ${base.inductionSteps} steps copying random spans`] : []),
        ...(base?.pretrainSteps ? [`${base.pretrainSteps} steps pretrained on the trajectories`] : []),
        "Qwen3's chat template",
      ];
      context.note(`building the tiny Qwen3 (${parts.join(", ")})`);
      await startLogged(tinyModelCommand(config, python, out), log).done;
    };
    if (config.base.kind === "tiny-qwen3" && !usesCorpus(config)) await buildTinyModel();
    if (config.sft) {
      const envConfig = parseConfig(env.id, env.configSchema, config.envConfig);
      for (const policy of config.data.policies) {
        context.note(`scripted trajectories: ${policy} × ${config.data.episodes} (train split)`);
        await runEvaluation({
          rows: [{ env, config: envConfig, split: "train", seed: config.data.seed, n: config.data.episodes }],
          models: [{ kind: "scripted", policy }],
          out: paths.trajectories,
          quiet: true,
          ...(context.signal ? { signal: context.signal } : {}),
        });
      }
      if (usesCorpus(config)) {
        const conversations = await writeTrajectoryConversations([paths.trajectories], paths.corpus);
        log.write(`tokenizer corpus: ${conversations} conversations\n`);
        await buildTinyModel();
      }
      context.note("SFT rows: every assistant turn, double-rendered and prefix-checked");
      const report = await prepareTrajectorySft({
        runs: [paths.trajectories],
        output: paths.rows,
        modelDirectory: modelPaths(config, out).base,
        maxTokens: config.data.maxTokens,
        enableThinking: false,
        workers: 0,
        ...(config.data.minReward !== undefined ? { minReward: config.data.minReward } : {}),
      });
      log.write(`sft rows: ${report.rows_out} of ${report.rows_in} turns from ${report.episodes} episodes\n`);
      if (report.rows_out === 0)
        throw new PipelineError({ code: "PIPELINE_NO_SFT_ROWS", message: `no SFT row passed the checks; see ${paths.rows}.report.json` });
    }
    const count = await writePromptDataset({
      env,
      split: "train",
      n: config.data.prompts,
      seed: config.data.promptSeed,
      config: config.envConfig,
      out: paths.prompts,
    });
    log.write(`wrote ${count} GRPO prompts to ${paths.prompts}\n`);
  },
};

const sftCommand = (context: Pick<StageContext, "config" | "out" | "python">) => {
  const { config, out, python } = context;
  const models = modelPaths(config, out);
  return [
    python,
    join(PACKAGE_ROOT, "python/train_sft.py"),
    "--model",
    models.base,
    "--dataset",
    dataPaths(out).rows,
    "--output-dir",
    models.sft,
    ...flagArgs(config.sft ?? {}),
  ];
};

const sftStage: Stage = {
  name: "sft",
  skipReason: (config) => (config.sft ? undefined : "the preset starts GRPO from the base model"),
  plan: (context) => [shell(sftCommand(context))],
  async run(context) {
    context.note("python/train_sft.py");
    await startLogged(sftCommand(context), context.log).done;
  },
};

/** The suite a config evaluates with. */
export function pipelineSuite(config: PipelineConfig): Suite {
  if (typeof config.eval.suite === "string") return requireBuiltinSuite(config.eval.suite, config.eval.dataDir ? { dataDir: config.eval.dataDir } : {});
  return parseSuite({ name: `pipeline-${config.preset}`, description: `The ${config.preset} pipeline's evaluation.`, rows: config.eval.suite });
}

function evalStage(name: "eval-pre" | "eval-post", label: "pre" | "post"): Stage {
  const model = (config: PipelineConfig, out: string) => (label === "pre" ? modelPaths(config, out).pre : modelPaths(config, out).grpo);
  return {
    name,
    skipReason: () => undefined,
    plan({ config, out, python }) {
      const { eval: settings } = config;
      const suite = typeof settings.suite === "string" ? settings.suite : join(out, name, "suite.json");
      return [
        `${shell(modelServerCommand(settings.engine, python, model(config, out), "PORT", settings.serverArgs))} &`,
        shell([
          "toolgym", "eval", "--suite", suite, "--model", `${label}=http://127.0.0.1:PORT/v1#${model(config, out)}`,
          "--temperature", String(settings.temperature), "--max-tokens", String(settings.maxTokens),
          "--chat-template-kwargs", JSON.stringify(settings.chatTemplateKwargs), "--concurrency", String(settings.concurrency),
          ...(settings.maxTurns ? ["--max-turns", String(settings.maxTurns)] : []), ...(settings.dataDir ? ["--data-dir", settings.dataDir] : []),
          "--out", join(out, name, "runs"),
        ]), // prettier-ignore
        "kill %1",
      ];
    },
    async run(context) {
      const { config, out } = context;
      const settings = config.eval;
      const suite = pipelineSuite(config);
      writeFileSync(join(out, name, "suite.json"), `${JSON.stringify(suite, null, 2)}\n`);
      context.note(`${settings.engine} serve ${model(config, out)}`);
      const server = await startModelServer(settings.engine, {
        python: context.python,
        model: model(config, out),
        log: context.log,
        extraArgs: settings.serverArgs,
      });
      try {
        context.note(`suite ${suite.name}: ${suite.rows.map((row) => `${row.benchmark} n=${row.n}`).join(", ")}`);
        await runSuite({
          suite,
          models: [
            {
              kind: "openai",
              label,
              name: model(config, out),
              baseUrls: [server.baseUrl],
              sampling: { temperature: settings.temperature, max_tokens: settings.maxTokens },
              chatTemplateKwargs: settings.chatTemplateKwargs as never,
              maxRetries: 1,
            },
          ],
          out: join(out, name, "runs"),
          concurrency: settings.concurrency,
          ...(settings.maxTurns ? { maxTurns: settings.maxTurns } : {}),
          ...(context.progress ? { progress: context.progress } : { quiet: true }),
          ...(context.signal ? { signal: context.signal } : {}),
        });
      } finally {
        await server.stop();
      }
    },
  };
}

const grpoCommand = (context: Pick<StageContext, "config" | "out" | "python">, serverUrl: string) => {
  const { config, out, python } = context;
  const models = modelPaths(config, out);
  const launcher = config.grpo.launcher.length > 0 ? config.grpo.launcher : [python];
  return [
    ...launcher,
    join(PACKAGE_ROOT, "python/train_grpo.py"),
    ...["--model", models.pre, "--dataset", dataPaths(out).prompts, "--env", config.env, "--server-url", serverUrl, "--output-dir", models.grpo],
    ...flagArgs(config.grpo.flags),
  ];
};

/** The training steps' logs of the last GRPO stage run (read by the summary). */
export const GRPO_STEPS_FILE = "steps.jsonl";

const grpoStage: Stage = {
  name: "grpo",
  skipReason: () => undefined,
  plan: (context) => ["toolgym serve --host 127.0.0.1 --port SERVER_PORT &", shell(grpoCommand(context, "http://127.0.0.1:SERVER_PORT")), "kill %1"],
  async run(context) {
    const server = await startServer({ environments: ENVIRONMENTS, host: "127.0.0.1", port: 0 });
    context.note(`toolgym serve on ${server.url}; python/train_grpo.py`);
    const monitor = new GrpoSignalMonitor(context.config.grpo.noSignalSteps);
    let noSignal: string | undefined;
    const steps = join(context.out, "grpo", GRPO_STEPS_FILE);
    writeFileSync(steps, "");
    try {
      const running = startLogged(grpoCommand(context, server.url), context.log, {
        onLine: (line) => {
          const before = monitor.steps.length;
          const last = monitor.steps.at(-1);
          const verdict = monitor.feed(line);
          const step = monitor.steps.at(-1);
          if (step && (monitor.steps.length !== before || step !== last)) {
            writeFileSync(steps, monitor.steps.map((entry) => `${JSON.stringify(entry)}\n`).join(""));
            const calls = step["tools/call_frequency"];
            context.note(
              `grpo step ${monitor.steps.length}: reward ${Number(step.reward).toFixed(3)}, zero-variance groups ${String(step.frac_reward_zero_std)}, tool calls per completion ${String(calls)}`,
            );
          }
          if (verdict && !noSignal) {
            noSignal = verdict;
            void stopChild(running.child);
          }
        },
      });
      await running.done.catch((error: unknown) => {
        if (!noSignal) throw error;
      });
      if (noSignal) throw new PipelineError({ code: "GRPO_NO_SIGNAL", message: noSignal });
    } finally {
      await server.close();
    }
  },
};

const cardStage: Stage = {
  name: "card",
  skipReason: () => undefined,
  plan: ({ out }) => [shell(["toolgym", "report", join(out, "eval-pre", "runs"), join(out, "eval-post", "runs"), "--card", "--out", join(out, "card.md")])],
  async run(context) {
    const { report, text } = createReport([join(context.out, "eval-pre", "runs"), join(context.out, "eval-post", "runs")], { card: true });
    writeFileSync(join(context.out, "card.md"), text);
    writeFileSync(join(context.out, "card", "report.json"), `${JSON.stringify(report, null, 2)}\n`);
  },
};

export const PIPELINE_STAGES: readonly Stage[] = [dataStage, sftStage, evalStage("eval-pre", "pre"), grpoStage, evalStage("eval-post", "post"), cardStage];
