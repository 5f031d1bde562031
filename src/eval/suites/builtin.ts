import { UsageError } from "../../core/index.ts";
import { ENVIRONMENTS } from "../../envs/registry.ts";
import { parseSuite, type Suite, type SuiteRow } from "./suite.ts";

/** The official dev files the seed-card multihop rows read from --data-dir. */
export const SEED_DATA_FILES: Record<string, string> = {
  musique: "musique_ans_v1.0_dev.jsonl",
  "2wiki": "dev.json",
};

/** Metrics a report shows for each known environment (anything else: the reward total). */
export const ENVIRONMENT_METRICS: Record<string, string[]> = {
  musique: ["em", "f1"],
  "2wiki": ["em", "f1"],
  babyai: ["return"],
};

const TITLES: Record<string, string> = {
  musique: "MuSiQue",
  "2wiki": "2WikiMultihopQA",
  search_plan_ood: "search_plan_ood",
  search_plan_act: "search_plan_act",
  babyai: "BALROG BabyAI",
};

/** The benchmarks of the seed's table, in its order; every card made from a seed suite has these rows. */
export const SEED_BENCHMARKS = ["musique", "2wiki", "search_plan_ood", "babyai"] as const;

function seedRows(options: { dataDir?: string; quick: boolean }): SuiteRow[] {
  const multihopConfig = (): Record<string, unknown> => ({ mode: "search", ...(options.dataDir ? { data_dir: options.dataDir } : {}) });
  return [
    {
      benchmark: "musique",
      title: TITLES.musique,
      env: "musique",
      config: options.quick ? { mode: "search" } : multihopConfig(),
      n: options.quick ? 8 : 2417,
      seed: 0,
      metrics: ["em", "f1"],
    },
    {
      benchmark: "2wiki",
      title: TITLES["2wiki"],
      env: "2wiki",
      config: options.quick ? { mode: "search" } : multihopConfig(),
      n: options.quick ? 8 : 12576,
      seed: 0,
      metrics: ["em", "f1"],
    },
    {
      benchmark: "search_plan_ood",
      title: TITLES.search_plan_ood,
      env: "search_plan_ood",
      config: {},
      n: options.quick ? 10 : 100,
      seed: 0,
      metrics: ["reward"],
    },
    { benchmark: "babyai", title: TITLES.babyai, env: "babyai", config: {}, n: options.quick ? 5 : 50, seed: 0, metrics: ["return"] },
  ];
}

/** Names of the built-in suites: `seed-card`, `quick` and one per registered environment. */
export function builtinSuiteNames(): string[] {
  return ["seed-card", "quick", ...Object.keys(ENVIRONMENTS)];
}

/**
 * A built-in suite by name. `seed-card` reproduces the seed's table with its n (the multihop rows read
 * the official dev files from `dataDir`); `quick` has the same rows on small n and the shipped samples.
 */
export function builtinSuite(name: string, options: { dataDir?: string } = {}): Suite | undefined {
  if (name === "seed-card") {
    return parseSuite({
      name,
      description: "The seed's evaluation table: MuSiQue, 2WikiMultihopQA, search_plan_ood, BALROG BabyAI.",
      rows: seedRows({ dataDir: options.dataDir, quick: false }),
    });
  }
  if (name === "quick") {
    return parseSuite({ name, description: "The seed-card rows on small n and the shipped samples (smoke test).", rows: seedRows({ quick: true }) });
  }
  if (Object.hasOwn(ENVIRONMENTS, name)) {
    return parseSuite({
      name,
      description: `The ${name} environment, default config.`,
      rows: [{ benchmark: name, title: TITLES[name] ?? name, env: name, n: 100, metrics: ENVIRONMENT_METRICS[name] ?? ["reward"] }],
    });
  }
  return undefined;
}

export function requireBuiltinSuite(name: string, options: { dataDir?: string } = {}): Suite {
  const suite = builtinSuite(name, options);
  if (!suite)
    throw new UsageError({
      code: "SUITE_UNKNOWN",
      message: `unknown suite '${name}'; built in: ${builtinSuiteNames().join(", ")}, or pass a .json/.yaml suite file`,
    });
  return suite;
}
