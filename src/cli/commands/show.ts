import type { Command } from "commander";
import { UsageError, parseConfig, type AnyEnvironment } from "../../core/index.ts";
import { getEnvironment } from "../../envs/registry.ts";
import { writeJson, type CommandContext } from "../io.ts";
import { checkTaskIndex, parseInteger, parseConfigOption, parseText, resolveSplit } from "../options.ts";

/** `--task ID`: the task's index in the split, through the environment's own task ids (tau2's task ids). */
function indexOfTask(env: AnyEnvironment, split: string, config: unknown, taskId: string, index: number | undefined): number {
  if (index !== undefined) throw new UsageError({ code: "OPTION_CONFLICT", message: "--task and --index both pick the task; pass one of them" });
  if (!env.taskIndex) throw new UsageError({ code: "OPTION_UNSUPPORTED", message: `${env.id} has no task ids; pick its task with --index N` });
  const found = env.taskIndex({ split, config }, taskId);
  if (found === undefined)
    throw new UsageError({
      code: "TASK_UNKNOWN",
      message: `${env.id} has no task '${taskId}' in split ${split}; pass one of its task ids, or another --split`,
    });
  return found;
}

export function registerShow(program: Command, { io }: CommandContext): void {
  program
    .command("show")
    .description("Print a task's prompt, its tool schemas and (with --solution) the hidden plan.")
    .argument("<env>", "environment id (toolgym list envs)")
    .option("--seed <seed>", "seed", parseInteger("--seed", { min: 0 }), 0)
    .option("--index <index>", "task index (default 0)", parseInteger("--index", { min: 0 }))
    .option("--task <id>", "the task with this id (tau2: a task id of the domain's tasks file) instead of --index", parseText("--task"))
    .option("--split <split>", "split (train, eval, ood...)", parseText("--split"))
    .option("--config <json|file>", "environment config: JSON, or a .json/.yaml file holding it", parseConfigOption("--config"), "{}")
    .option("--solution", "also print the hidden solution")
    .option("--json", "print JSON")
    .action((envId: string, options: { seed: number; index?: number; task?: string; split?: string; config: string; solution?: boolean; json?: boolean }) => {
      const env = getEnvironment(envId);
      const config = parseConfig(env.id, env.configSchema, options.config);
      const split = resolveSplit(env, options.split);
      const index = options.task === undefined ? (options.index ?? 0) : indexOfTask(env, split, config, options.task, options.index);
      checkTaskIndex(env, split, config, index);
      const task = env.generate({ split, seed: options.seed, index, config });
      const episode = env.start(task);
      const output = {
        env: env.id,
        split,
        seed: options.seed,
        index,
        config,
        task: env.publicView(task),
        messages: episode.view ? episode.view(episode.messages) : episode.messages,
        tools: episode.tools,
        ...(options.solution ? { solution: env.solution(task) } : {}),
      };
      if (options.json) return writeJson(io, output);
      const lines: string[] = [`# ${env.id}  split=${split} seed=${options.seed} index=${index}`, ""];
      for (const message of output.messages) lines.push(`## ${message.role}`, String(message.content ?? ""), "");
      lines.push("## tools");
      for (const tool of episode.tools) lines.push(`- ${tool.function.name}: ${tool.function.description}`, `  ${JSON.stringify(tool.function.parameters)}`);
      if (options.solution) lines.push("", "## solution (hidden from the agent)", JSON.stringify(env.solution(task), null, 2));
      io.stdout.write(`${lines.join("\n")}\n`);
    });
}
