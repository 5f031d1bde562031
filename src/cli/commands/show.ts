import type { Command } from "commander";
import { parseConfig } from "../../core/index.ts";
import { getEnvironment } from "../../envs/registry.ts";
import { writeJson, type CommandContext } from "../io.ts";
import { parseInteger, parseJsonText, parseText, resolveSplit } from "../options.ts";

export function registerShow(program: Command, { io }: CommandContext): void {
  program
    .command("show")
    .description("Print a task's prompt, its tool schemas and (with --solution) the hidden plan.")
    .argument("<env>", "environment id (toolgym list envs)")
    .option("--seed <seed>", "seed", parseInteger("--seed", { min: 0 }), 0)
    .option("--index <index>", "task index", parseInteger("--index", { min: 0 }), 0)
    .option("--split <split>", "split (train, eval, ood...)", parseText("--split"))
    .option("--config <json>", "environment config as JSON", parseJsonText("--config"), "{}")
    .option("--solution", "also print the hidden solution")
    .option("--json", "print JSON")
    .action((envId: string, options: { seed: number; index: number; split?: string; config: string; solution?: boolean; json?: boolean }) => {
      const env = getEnvironment(envId);
      const config = parseConfig(env.id, env.configSchema, options.config);
      const split = resolveSplit(env, options.split);
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
      if (options.json) return writeJson(io, output);
      const lines: string[] = [`# ${env.id}  split=${split} seed=${options.seed} index=${options.index}`, ""];
      for (const message of output.messages) lines.push(`## ${message.role}`, String(message.content ?? ""), "");
      lines.push("## tools");
      for (const tool of episode.tools) lines.push(`- ${tool.function.name}: ${tool.function.description}`, `  ${JSON.stringify(tool.function.parameters)}`);
      if (options.solution) lines.push("", "## solution (hidden from the agent)", JSON.stringify(env.solution(task), null, 2));
      io.stdout.write(`${lines.join("\n")}\n`);
    });
}
