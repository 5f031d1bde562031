import type { Command } from "commander";
import { parseConfig } from "../../core/index.ts";
import { getEnvironment } from "../../envs/registry.ts";
import { parseInteger, writeJson } from "../options.ts";

export function registerShow(program: Command): void {
  program
    .command("show")
    .description("Print a task's prompt, its tool schemas and (with --solution) the hidden plan.")
    .argument("<env>", "environment id")
    .option("--seed <seed>", "seed", parseInteger("--seed"), 0)
    .option("--index <index>", "task index", parseInteger("--index"), 0)
    .option("--split <split>", "split (train, eval, ood...)")
    .option("--config <json>", "environment config as JSON", "{}")
    .option("--solution", "also print the hidden solution")
    .option("--json", "print JSON")
    .action((envId: string, options: { seed: number; index: number; split?: string; config: string; solution?: boolean; json?: boolean }) => {
      const env = getEnvironment(envId);
      const config = parseConfig(env.id, env.configSchema, options.config);
      const split = options.split ?? env.defaultSplit;
      const task = env.generate({ split, seed: options.seed, index: options.index, config });
      const episode = env.start(task);
      const output = {
        env: env.id,
        split,
        seed: options.seed,
        index: options.index,
        config,
        task: env.publicView(task),
        messages: episode.view ? episode.view(episode.messages) : episode.messages,
        tools: episode.tools,
        ...(options.solution ? { solution: env.solution(task) } : {}),
      };
      if (options.json) return writeJson(output);
      const lines: string[] = [`# ${env.id}  split=${split} seed=${options.seed} index=${options.index}`, ""];
      for (const message of output.messages) lines.push(`## ${message.role}`, String(message.content ?? ""), "");
      lines.push("## tools");
      for (const tool of episode.tools) lines.push(`- ${tool.function.name}: ${tool.function.description}`, `  ${JSON.stringify(tool.function.parameters)}`);
      if (options.solution) lines.push("", "## solution (hidden from the agent)", JSON.stringify(env.solution(task), null, 2));
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
