import { join } from "node:path";
import type { Command } from "commander";
import { UsageError, parseConfig } from "../../core/index.ts";
import { getPolicies, getPolicy } from "../../agents/scripted/registry.ts";
import { DEFAULT_EVAL_ENVIRONMENTS, getEnvironment } from "../../envs/registry.ts";
import { formatScriptedTable, runScriptedEval, type ScriptedRunRow } from "../../eval/scripted-run.ts";
import { runSuiteCommand } from "../../eval/suites/command.ts";
import { collect, parseInteger } from "../options.ts";

export interface EvalCommandOptions {
  env?: string;
  agent?: string;
  n?: number;
  seed: number;
  split?: string;
  config?: string;
  out?: string;
  quiet?: boolean;
  suite?: string;
  model?: string[];
  dataDir?: string;
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, "-");
}

export async function runScriptedCommand(options: EvalCommandOptions): Promise<number> {
  const envIds = options.env ? options.env.split(",").map((id) => id.trim()).filter(Boolean) : DEFAULT_EVAL_ENVIRONMENTS;
  if (envIds.length === 0) throw new UsageError({ message: "no environment selected; pass --env ID" });
  const rows: ScriptedRunRow[] = envIds.map((id) => {
    const env = getEnvironment(id);
    const policy = options.agent ? getPolicy(env.id, options.agent) : getPolicies(env.id).find((candidate) => candidate.kind === "genuine");
    if (!policy) throw new UsageError({ message: `no genuine scripted agent for ${env.id}; pass --agent` });
    const config = parseConfig(env.id, env.configSchema, options.config ?? "{}");
    return { env, config, policy, n: options.n ?? 100, seed: options.seed, split: options.split ?? env.defaultSplit };
  });
  const out = options.out ?? join("runs", timestamp());
  const summaries = await runScriptedEval({ rows, out, quiet: options.quiet });
  process.stdout.write(`${formatScriptedTable(summaries)}\n\ntrajectories: ${join(out, "results.jsonl")}\nsummary:      ${join(out, "summary.json")}\n`);
  return 0;
}

export function registerEval(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("eval")
    .description("Run agents over environments. With no arguments: the built-in scripted agents on every default environment.")
    .option("--env <ids>", "comma-separated environment ids")
    .option("--agent <id>", "scripted agent (default: the environment's oracle)")
    .option("--n <n>", "episodes per environment", parseInteger("--n"))
    .option("--seed <seed>", "seed of the task set", parseInteger("--seed"), 0)
    .option("--split <split>", "task split")
    .option("--config <json>", "environment config as JSON")
    .option("--out <dir>", "output directory (default runs/<timestamp>)")
    .option("--quiet", "no progress bar")
    .option("--suite <name|file>", "run a suite (seed-card, quick, an environment id, or a .json/.yaml file); see toolgym report")
    .option("--model <label=url#model>", "with --suite: a model to evaluate, LABEL=URL[,URL…]#MODEL (repeatable)", collect)
    .option("--data-dir <dir>", "with --suite: directory of the official dev files (seed-card)")
    .action(async (options: EvalCommandOptions) => {
      if (options.suite) return setExitCode(await runSuiteCommand({ suite: options.suite, model: options.model, dataDir: options.dataDir, out: options.out, quiet: options.quiet }));
      setExitCode(await runScriptedCommand(options));
    });
}
