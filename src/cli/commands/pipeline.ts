import { resolve } from "node:path";
import type { Command } from "commander";
import { UsageError } from "../../core/index.ts";
import type { StageName } from "../../pipeline/config.ts";
import { parsePipelineConfig, readPipelineConfig, type PipelineConfig } from "../../pipeline/config.ts";
import { PRESET_NAMES, presetConfig } from "../../pipeline/presets.ts";
import { checkPipelinePython } from "../../pipeline/python-check.ts";
import { checkStageOrder, describePipeline, parseStages, runPipeline } from "../../pipeline/run-pipeline.ts";
import type { ToolgymRunner } from "../../pipeline/steps.ts";
import type { CommandContext } from "../io.ts";
import { parseChoice, parseText, requireInputFile, requireOutputDirectory } from "../options.ts";

interface PipelineCommandOptions {
  preset?: string;
  config?: string;
  out?: string;
  resume?: boolean;
  only?: StageName[];
  dryRun?: boolean;
  quiet?: boolean;
  userModel?: string;
  judgeModel?: string;
  evalBase?: boolean;
}

/** The config with the evaluation options given on the command line, checked again as a whole. */
function withEvalOptions(config: PipelineConfig, options: PipelineCommandOptions): PipelineConfig {
  if (options.userModel === undefined && options.judgeModel === undefined && !options.evalBase) return config;
  const evaluation = {
    ...config.eval,
    ...(options.userModel !== undefined ? { userModel: options.userModel } : {}),
    ...(options.judgeModel !== undefined ? { judgeModel: options.judgeModel } : {}),
    ...(options.evalBase ? { base: true } : {}),
  };
  return parsePipelineConfig({ ...config, eval: evaluation }, "--user-model/--judge-model/--eval-base");
}

/**
 * The pipeline's `toolgym …` steps, run by this CLI's main() in this process: node's start and loading the CLI
 * again, about 2 s of CPU, for each of a stage's few dozen steps would dwarf the small ones. Imported when
 * first used, since main.ts imports this module.
 */
const runToolgym: ToolgymRunner = async (args, io) => {
  const { main } = await import("../main.ts");
  return main(args, io);
};

export function registerPipeline(program: Command, { io }: CommandContext): void {
  program
    .command("pipeline")
    .description(
      "The seed pipeline as one command: data → sft → baseline → eval-pre → grpo → eval-post → card, each stage into OUT/<stage>/ with a log and a done marker.",
    )
    .option("--preset <name>", `${PRESET_NAMES.join(", ")} (default smoke when no --config)`, parseChoice("--preset", PRESET_NAMES))
    .option("--config <file>", "a pipeline config (YAML/JSON, the shape --dry-run prints)", parseText("--config"))
    .option("--out <dir>", "output directory (default runs/pipeline-<preset>)", parseText("--out"))
    .option("--resume", "skip the stages that already finished in --out")
    .option("--only <stages>", "run only these stages (comma-separated)", parseStages)
    .option("--dry-run", "print every command and config the pipeline would run, and start nothing")
    .option("--quiet", "no eval progress bars (stage lines still go to stderr)")
    .option(
      "--user-model <url#name>",
      "tau2: the user simulator every evaluation uses, URL#NAME (replaces the config's eval.userModel)",
      parseText("--user-model"),
    )
    .option("--judge-model <url#name>", "tau2: the NL-assertion judge, URL#NAME (replaces the config's eval.judgeModel)", parseText("--judge-model"))
    .option("--eval-base", "also evaluate the base model (label base) beside the SFT model")
    .action(async (options: PipelineCommandOptions) => {
      if (options.preset && options.config) throw new UsageError({ code: "OPTION_CONFLICT", message: "pass --preset or --config, not both" });
      const given = options.config ? readPipelineConfig(requireInputFile("--config", options.config)) : presetConfig(options.preset ?? "smoke");
      const config = withEvalOptions(given, options);
      const out = requireOutputDirectory("--out", resolve(options.out ?? `runs/pipeline-${config.preset}`));
      if (options.dryRun) return void io.stdout.write(describePipeline({ config, out, ...(options.only ? { only: options.only } : {}) }));
      checkStageOrder({ config, out, ...(options.only ? { only: options.only } : {}) });
      checkPipelinePython();
      const summary = await runPipeline({
        config,
        out,
        resume: options.resume ?? false,
        ...(options.only ? { only: options.only } : {}),
        progress: io.stderr,
        quiet: options.quiet ?? false,
        toolgym: runToolgym,
      });
      const table = summary.arms.flatMap((arm) =>
        arm.comparisons.map(
          (row) =>
            `  ${arm.name} (${arm.kind}) ${row.benchmark} ${row.metric}: ${row.against} ${row.pre.mean.toFixed(3)} → ${row.post.mean.toFixed(3)} (Δ ${row.delta.toFixed(3)}, p_holm ${row.p_holm.toFixed(3)})`,
        ),
      );
      // Without arms, each evaluated model's mean reward (and the benchmark's own summary, e.g. tau2's pass^k).
      const results =
        summary.arms.length > 0
          ? []
          : summary.evaluation.map(
              (entry) =>
                `  ${entry.model} ${entry.benchmark}: mean reward ${entry.reward ? entry.reward.mean.toFixed(3) : "not computed"}${typeof entry.summary?.text === "string" ? `; ${entry.summary.text}` : ""}`,
            );
      io.stdout.write(
        [`pipeline ${config.preset} finished in ${summary.seconds.toFixed(1)} s`, ...table, ...results, `wrote ${out}/card.md and ${out}/summary.json`].join(
          "\n",
        ) + "\n",
      );
    });
}
