import { UsageError } from "../../core/index.ts";
import type { Command } from "commander";
import { getEnvironment } from "../../envs/registry.ts";
import { writePromptDataset } from "../../training/prompt-dataset.ts";
import type { CommandContext } from "../io.ts";
import { createProgress, type ProgressStream } from "../../eval/progress.ts";
import { parseInteger, parseConfigOption, parseText, resolveSplit } from "../options.ts";
import { FORCE_OPTION, checkOutputPath, writeOutputAtomically } from "../output-file.ts";

interface DatasetOptions {
  force?: boolean;
  split?: string;
  n: number;
  seed: number;
  config: string;
  out: string;
  allowPartialRewards?: boolean;
}

export function registerDataset(program: Command, { io }: CommandContext): void {
  program
    .command("dataset")
    .description(
      "Write a GRPO prompt dataset (rows {prompt, env, env_version, split, seed, index, config, prompt_hash}) that TRL loads with `datasets`; " +
        "toolgym_trl's reset() refuses a row whose env_version or prompt_hash the server no longer matches.",
    )
    .argument("<env>", "environment id (toolgym list envs)")
    .requiredOption("--out <file>", "output file, .jsonl or .parquet", parseText("--out"))
    .option(...FORCE_OPTION)
    .option("--split <split>", "task split (default: the environment's default split)", parseText("--split"))
    .option("--n <n>", "number of rows", parseInteger("--n", { min: 1 }), 4096)
    .option("--seed <seed>", "seed of the task set", parseInteger("--seed", { min: 0 }), 0)
    .option("--config <json|file>", "environment config: JSON, or a .json/.yaml file holding it", parseConfigOption("--config"), "{}")
    .option(
      "--allow-partial-rewards",
      "keep tasks whose reward would leave part of the benchmark's basis unscored (tau2 NL assertions without judge_model); left out and counted by default",
    )
    .action(async (envId: string, options: DatasetOptions) => {
      checkOutputPath(options.out, { force: options.force });
      const env = getEnvironment(envId);
      const split = resolveSplit(env, options.split);
      if (!/\.(jsonl|parquet)$/.test(options.out)) throw new UsageError({ message: `--out must end in .jsonl or .parquet, got '${options.out}'` });
      // Started at the first row, so a config refused before any row leaves its one error line alone on stderr.
      let progress: ReturnType<typeof createProgress> | undefined;
      const signal = io.interrupts?.();
      let leftOut = 0;
      let count: number;
      try {
        count = await writeOutputAtomically(
          options.out,
          (path) =>
            writePromptDataset({
              env,
              split,
              n: options.n,
              seed: options.seed,
              config: options.config,
              out: path,
              partialRewards: options.allowPartialRewards === true,
              onLeftOut: () => leftOut++,
              onRow: () => (progress ??= createProgress({ label: `dataset ${env.id}`, total: options.n, stream: io.stderr as ProgressStream })).tick(),
              ...(signal ? { signal } : {}),
            }),
          { force: options.force, ...(signal ? { signal } : {}) },
        );
      } finally {
        progress?.stop();
      }
      io.stdout.write(`wrote ${count} prompts (${env.id}, split ${split}, seed ${options.seed}) to ${options.out}\n`);
      if (leftOut > 0)
        io.stdout.write(
          `left out ${leftOut} of ${options.n} tasks whose reward needs a judge (NL assertions); set judge_model in --config, or pass --allow-partial-rewards to train on the reward without them\n`,
        );
    });
}
