import type { Command } from "commander";
import { getEnvironment } from "../../envs/registry.ts";
import { writePromptDataset } from "../../training/prompt-dataset.ts";
import { parseInteger } from "../options.ts";

interface DatasetOptions {
  split?: string;
  n: number;
  seed: number;
  config: string;
  out: string;
}

export function registerDataset(program: Command): void {
  program
    .command("dataset")
    .description("Write a GRPO prompt dataset (rows {prompt, env, split, seed, index, config}) that TRL loads with `datasets`.")
    .argument("<env>", "environment id")
    .requiredOption("--out <file>", "output file, .jsonl or .parquet")
    .option("--split <split>", "task split (default: the environment's default split)")
    .option("--n <n>", "number of rows", parseInteger("--n"), 4096)
    .option("--seed <seed>", "seed of the task set", parseInteger("--seed"), 0)
    .option("--config <json>", "environment config as JSON", "{}")
    .action(async (envId: string, options: DatasetOptions) => {
      const env = getEnvironment(envId);
      const split = options.split ?? env.defaultSplit;
      const count = await writePromptDataset({ env, split, n: options.n, seed: options.seed, config: options.config, out: options.out });
      process.stdout.write(`wrote ${count} prompts (${env.id}, split ${split}, seed ${options.seed}) to ${options.out}\n`);
    });
}
