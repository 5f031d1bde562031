import type { Command } from "commander";
import { UsageError, parseConfig, type AnyEnvironment, type Message, type ReplayRequest } from "../../core/index.ts";
import { readJsonItems } from "../../envs/_kit/read-items.ts";
import { createScriptedAgent, type PlannedCall } from "../../envs/_kit/scripted.ts";
import { environmentsOfFamily, getEnvironment, isEnvironmentId } from "../../envs/registry.ts";
import { runEpisode } from "../../rollout/run-episode.ts";
import { writeJson, type CliIo, type CommandContext } from "../io.ts";
import { checkTaskIndex, parseInputFile, parseInteger, parseConfigOption, parseText, resolveSplit } from "../options.ts";

type ReplayItem = string | PlannedCall | PlannedCall[];

interface ReplayOptions {
  seed: number;
  index: number;
  split?: string;
  config: string;
  task?: string;
  calls?: string;
  replies?: string;
  cases?: string;
  json?: boolean;
}

/** An environment id, or a family name (e.g. every domain of one benchmark) whose first replayable member answers. */
function resolveTarget(target: string): AnyEnvironment {
  if (isEnvironmentId(target)) return getEnvironment(target);
  const family = environmentsOfFamily(target).filter((env) => env.replay);
  if (family.length > 0) return family[0] as AnyEnvironment;
  return getEnvironment(target);
}

/** The default replay: the calls file's items as the agent's turns through the one episode driver. */
async function replayCalls(env: AnyEnvironment, options: ReplayOptions, io: CliIo): Promise<void> {
  if (!options.calls) throw new UsageError({ code: "REPLAY_INPUT_MISSING", message: `${env.id} replay needs --calls FILE` });
  const config = parseConfig(env.id, env.configSchema, options.config);
  const split = resolveSplit(env, options.split);
  checkTaskIndex(env, split, config, options.index);
  const items = readJsonItems(options.calls, "--calls") as ReplayItem[];
  const agent = createScriptedAgent("replay", ({ turn }) => {
    const item = items[turn - 1];
    if (typeof item === "string") return { text: item };
    if (Array.isArray(item)) return { calls: item };
    if (item && typeof item === "object") return { calls: [item] };
    return { text: "" };
  });
  const trajectory = await runEpisode({ env, split, seed: options.seed, index: options.index, config, agent, maxTurns: items.length });
  if (options.json) return writeJson(io, trajectory);
  const lines = trajectory.steps.map((step) => `[${step.turn}] ${step.name}(${JSON.stringify(step.arguments)}) → ${step.result}`);
  const last = trajectory.messages.filter((message: Message) => message.role !== "tool").length;
  lines.push("", `termination: ${trajectory.termination}  turns: ${trajectory.turns}  messages: ${last}`, `reward: ${JSON.stringify(trajectory.reward)}`);
  io.stdout.write(`${lines.join("\n")}\n`);
}

export function registerReplay(program: Command, { io }: CommandContext): void {
  program
    .command("replay")
    .description("Rebuild a task and apply recorded tool calls, replies or reference cases; print the result and the reward.")
    .argument("<env>", "environment id (or a family name with --cases)")
    .option("--seed <seed>", "seed", parseInteger("--seed", { min: 0 }), 0)
    .option("--index <index>", "task index", parseInteger("--index", { min: 0 }), 0)
    .option("--split <split>", "split", parseText("--split"))
    .option("--config <json|file>", "environment config: JSON, or a .json/.yaml file holding it", parseConfigOption("--config"), "{}")
    .option("--task <id>", "task id, for environments whose tasks have ids", parseText("--task"))
    .option("--calls <file>", "JSON array or JSONL: {name, arguments} per call, an array per turn, or strings for text environments", parseInputFile("--calls"))
    .option("--replies <file>", "JSON array of raw model replies, for text-protocol environments that parse replies", parseInputFile("--replies"))
    .option("--cases <file>", "JSONL of reference cases, for environments that ship them", parseInputFile("--cases"))
    .option("--json", "print JSON")
    .action(async (target: string, options: ReplayOptions) => {
      const env = resolveTarget(target);
      if (!env.replay) return replayCalls(env, options, io);
      // An index names a task only when no --task or --cases does.
      if (options.task === undefined && options.cases === undefined)
        checkTaskIndex(env, resolveSplit(env, options.split), parseConfig(env.id, env.configSchema, options.config), options.index);
      const request: ReplayRequest = {
        config: options.config,
        seed: options.seed,
        index: options.index,
        ...(options.split !== undefined ? { split: options.split } : {}),
        ...(options.task !== undefined ? { task: options.task } : {}),
        ...(options.calls !== undefined ? { calls: options.calls } : {}),
        ...(options.replies !== undefined ? { replies: options.replies } : {}),
        ...(options.cases !== undefined ? { cases: options.cases } : {}),
      };
      const output = await env.replay(request);
      if (output && typeof output === "object" && !Array.isArray(output) && "lines" in output && Array.isArray(output.lines)) {
        for (const line of output.lines) io.stdout.write(`${JSON.stringify(line)}\n`);
        return;
      }
      writeJson(io, output);
    });
}
