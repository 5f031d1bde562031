import { EnvConfigError, defineEnvironment, type EnvironmentDefinition, type JsonValue, type Message, type SuiteEntry } from "../../core/index.ts";
import { searchPlanFailures } from "./failures.ts";
import { searchPlanWatch } from "./signatures.ts";
import { searchPlanAudit } from "./policies/audit.ts";
import { searchPlanPolicies } from "./policies/index.ts";
import { createConfigSchema, type ConfigDefaults, type SearchPlanConfig } from "./config.ts";
import { SearchPlanEpisode } from "./episode.ts";
import { generateTask } from "./generate.ts";
import { runSolver } from "./solver.ts";
import type { Chain, SearchPlanTask } from "./task.ts";
import { themeByName, type Theme } from "./themes.ts";
import { searchPlanSecrets } from "./secrets.ts";

export interface SearchPlanDefinitionOptions {
  id: string;
  title: string;
  description: string;
  seedSuite?: SuiteEntry;
  splits: readonly string[];
  defaultSplit: string;
  defaults: ConfigDefaults;
  /** Themes each split may use. */
  themesFor(split: string): readonly string[];
}

function systemPrompt(theme: Theme): string {
  return [
    `You operate a database of ${theme.description}. Everything in it is fictional: names, codes and numbers cannot be known in advance, only found with the tools.`,
    "Use `search` to find records and `read_record` to see their fields and links. `update_record` and `link_records` change the database: change only what the task asks for.",
    'When the task is complete, call `finish` with status "done" (put the answer to a question in `answer`, exactly as the record shows it).',
    'If the task refers to a record or a link that does not exist, change nothing and call `finish` with status "impossible".',
  ].join("\n");
}

export function promptMessages(task: SearchPlanTask): Message[] {
  const theme = themeByName(task.theme) as Theme;
  return [
    { role: "system", content: systemPrompt(theme) },
    { role: "user", content: `${task.text}\n\nRecord types: ${theme.types.map((type) => type.name).join(", ")}.` },
  ];
}

function chainsOf(task: SearchPlanTask): Chain[] {
  return task.goals.flatMap((goal) =>
    "chain" in goal ? [goal.chain] : goal.kind === "link" ? [goal.source, goal.target] : goal.kind === "copy" ? [goal.from, goal.to] : [],
  );
}

/** A generous turn limit from the size of the plan (one tool call per turn still leaves room to recover). */
export function turnLimit(task: SearchPlanTask): number {
  const estimate =
    chainsOf(task).reduce((sum, chain) => sum + chain.relations.length + 2 + (chain.start.by === "attribute" ? 3 : 0), 0) + task.goals.length + 1;
  return Math.min(100, 10 + 2 * estimate);
}

/** Builds a search_plan environment; search_plan_act and search_plan_ood differ only in these options. */
export function defineSearchPlanEnvironment(options: SearchPlanDefinitionOptions): EnvironmentDefinition<SearchPlanConfig, SearchPlanTask> {
  const configSchema = createConfigSchema(options.defaults);
  const start = (task: SearchPlanTask) => new SearchPlanEpisode(task, themeByName(task.theme) as Theme, promptMessages(task), task.slack);
  // Runners pass the same parsed config object for every task: parse it once.
  const parsedConfigs = new WeakMap<object, SearchPlanConfig>();
  const parsedConfig = (config: unknown): SearchPlanConfig => {
    if (typeof config !== "object" || config === null) return configSchema.parse(config ?? {});
    let parsed = parsedConfigs.get(config);
    if (!parsed) parsedConfigs.set(config, (parsed = configSchema.parse(config)));
    return parsed;
  };
  return defineEnvironment<SearchPlanConfig, SearchPlanTask>({
    id: options.id,
    version: "2",
    title: options.title,
    family: "search_plan",
    description: options.description,
    policies: searchPlanPolicies,
    audit: searchPlanAudit(),
    failures: searchPlanFailures,
    watch: searchPlanWatch,
    metrics: ["reward"],
    ...(options.seedSuite ? { seedSuite: options.seedSuite } : {}),
    protocol: "tools",
    splits: options.splits,
    defaultSplit: options.defaultSplit,
    configSchema,
    maxTurns: turnLimit,
    generate({ split, seed, index, config }) {
      if (!options.splits.includes(split))
        throw new EnvConfigError({ code: "ENV_SPLIT_UNKNOWN", message: `${options.id}: unknown split '${split}'; splits: ${options.splits.join(", ")}` });
      const parsed = parsedConfig(config);
      return generateTask({ envId: options.id, split, seed, index, config: parsed, allowedThemes: options.themesFor(split) });
    },
    publicView: (task) => ({
      env: task.env,
      split: task.split,
      seed: task.seed,
      index: task.index,
      theme: task.theme,
      text: task.text,
      types: (themeByName(task.theme) as Theme).types.map((type) => type.name),
    }),
    solution(task) {
      const dryRun = start(task);
      const plan = runSolver(task, (name, args) => dryRun.call(name, args)).map((call) => ({ name: call.name, arguments: call.arguments }));
      return JSON.parse(
        JSON.stringify({
          family: task.family,
          status: task.status,
          answer: task.answer,
          hops: task.hops,
          requirements: task.requirements,
          goals: task.goals,
          plan,
        }),
      ) as JsonValue;
    },
    secrets: searchPlanSecrets,
    start,
  });
}
