import { resolve } from "node:path";
import type { Command } from "commander";
import { UsageError } from "../../core/index.ts";
import type { StageName } from "../../pipeline/config.ts";
import { readPipelineConfig } from "../../pipeline/config.ts";
import { PRESET_NAMES, presetConfig } from "../../pipeline/presets.ts";
import { checkPipelinePython } from "../../pipeline/python-check.ts";
import { describePipeline, parseStages, runPipeline } from "../../pipeline/run-pipeline.ts";
import type { CommandContext } from "../io.ts";
import { parseChoice, parseText, requireInputFile } from "../options.ts";

interface PipelineCommandOptions {
  preset?: string;
  config?: string;
  out?: string;
  resume?: boolean;
  only?: StageName[];
  dryRun?: boolean;
  quiet?: boolean;
}

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
    .action(async (options: PipelineCommandOptions) => {
      if (options.preset && options.config) throw new UsageError({ code: "OPTION_CONFLICT", message: "pass --preset or --config, not both" });
      const config = options.config ? readPipelineConfig(requireInputFile("--config", options.config)) : presetConfig(options.preset ?? "smoke");
      const out = resolve(options.out ?? `runs/pipeline-${config.preset}`);
      if (options.dryRun) return void io.stdout.write(describePipeline({ config, out, ...(options.only ? { only: options.only } : {}) }));
      checkPipelinePython();
      const summary = await runPipeline({
        config,
        out,
        resume: options.resume ?? false,
        ...(options.only ? { only: options.only } : {}),
        progress: io.stderr,
        quiet: options.quiet ?? false,
      });
      const table = summary.arms.flatMap((arm) =>
        arm.comparisons.map(
          (row) =>
            `  ${arm.name} (${arm.kind}) ${row.benchmark} ${row.metric}: pre ${row.pre.mean.toFixed(3)} → ${row.post.mean.toFixed(3)} (Δ ${row.delta.toFixed(3)}, p_holm ${row.p_holm.toFixed(3)})`,
        ),
      );
      io.stdout.write(
        [`pipeline ${config.preset} finished in ${summary.seconds.toFixed(1)} s`, ...table, `wrote ${out}/card.md and ${out}/summary.json`].join("\n") + "\n",
      );
    });
}
