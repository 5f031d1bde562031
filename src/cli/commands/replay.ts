import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { UsageError, parseConfig, type Message } from "../../core/index.ts";
import { createScriptedAgent, type PlannedCall } from "../../agents/scripted/policy.ts";
import { getEnvironment } from "../../envs/registry.ts";
import { runEpisode } from "../../rollout/run-episode.ts";
import { parseInteger, writeJson } from "../options.ts";

type ReplayItem = string | PlannedCall | PlannedCall[];

/** Reads a calls file: a JSON array, or JSONL with one item per line. */
export function readCallsFile(path: string): ReplayItem[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError({ message: `cannot read --calls file '${path}': ${(error as Error).message}` });
  }
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) {
    try {
      return JSON.parse(trimmed) as ReplayItem[];
    } catch (error) {
      throw new UsageError({ message: `${path}: not valid JSON (${(error as Error).message})` });
    }
  }
  return trimmed
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line, position) => {
      try {
        return JSON.parse(line) as ReplayItem;
      } catch (error) {
        throw new UsageError({ message: `${path}:${position + 1}: not valid JSON (${(error as Error).message})` });
      }
    });
}

export function registerReplay(program: Command): void {
  program
    .command("replay")
    .description("Rebuild a task and apply a list of tool calls (or text replies); print the trajectory and reward.")
    .argument("<env>", "environment id")
    .option("--seed <seed>", "seed", parseInteger("--seed"), 0)
    .option("--index <index>", "task index", parseInteger("--index"), 0)
    .option("--split <split>", "split")
    .option("--config <json>", "environment config as JSON", "{}")
    .requiredOption("--calls <file>", "JSON array or JSONL: {name, arguments} per call, an array per turn, or strings for text environments")
    .option("--json", "print JSON")
    .action(async (envId: string, options: { seed: number; index: number; split?: string; config: string; calls: string; json?: boolean }) => {
      if (envId === "babyai") {
        const { replayBabyAI } = await import("../../envs/babyai/replay.ts");
        return writeJson(
          replayBabyAI({ config: options.config, seed: options.seed, index: options.index, split: options.split, actions: readCallsFile(options.calls) }),
        );
      }
      const env = getEnvironment(envId);
      const config = parseConfig(env.id, env.configSchema, options.config);
      const split = options.split ?? env.defaultSplit;
      const items = readCallsFile(options.calls);
      const agent = createScriptedAgent("replay", ({ turn }) => {
        const item = items[turn - 1];
        if (typeof item === "string") return { text: item };
        if (Array.isArray(item)) return { calls: item };
        if (item && typeof item === "object") return { calls: [item] };
        return { text: "" };
      });
      const trajectory = await runEpisode({ env, split, seed: options.seed, index: options.index, config, agent, maxTurns: items.length });
      if (options.json) return writeJson(trajectory);
      const lines = trajectory.steps.map((step) => `[${step.turn}] ${step.name}(${JSON.stringify(step.arguments)}) → ${step.result}`);
      const last = trajectory.messages.filter((message: Message) => message.role !== "tool").length;
      lines.push("", `termination: ${trajectory.termination}  turns: ${trajectory.turns}  messages: ${last}`, `reward: ${JSON.stringify(trajectory.reward)}`);
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
