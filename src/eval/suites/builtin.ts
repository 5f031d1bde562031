import { UsageError, type AnyEnvironment } from "../../core/index.ts";
import { getEnvironment, isEnvironmentId, listEnvironments } from "../../envs/registry.ts";
import { parseSuite, type Suite, type SuiteRow } from "./suite.ts";

/** The environments of the seed's table, in its order: those whose definition carries a `seedSuite` row. */
export function seedEnvironments(): AnyEnvironment[] {
  return listEnvironments()
    .filter((env) => env.seedSuite)
    .sort((a, b) => (a.seedSuite?.order ?? 0) - (b.seedSuite?.order ?? 0));
}

/** What `--data-dir` must hold for the seed card (official files named by the definitions). */
export function seedDataFiles(): Record<string, string> {
  return Object.fromEntries(seedEnvironments().flatMap((env) => (env.seedSuite?.dataDirHint ? [[env.id, env.seedSuite.dataDirHint]] : [])));
}

function row(env: AnyEnvironment, n: number, config: Record<string, unknown>): SuiteRow {
  return { benchmark: env.id, title: env.title ?? env.id, env: env.id, config, n, seed: 0, metrics: env.metrics ?? ["reward"] };
}

function seedRows(options: { dataDir?: string; quick: boolean }): SuiteRow[] {
  return seedEnvironments().map((env) => {
    const entry = env.seedSuite!;
    if (options.quick) return row(env, entry.quickN, entry.config ?? {});
    const config = options.dataDir && entry.seedConfig ? entry.seedConfig(options.dataDir) : (entry.config ?? {});
    return row(env, entry.n, config);
  });
}

/** Names of the built-in suites: `seed-card`, `quick` and one per registered environment. */
export function builtinSuiteNames(): string[] {
  return ["seed-card", "quick", ...listEnvironments().map((env) => env.id)];
}

/**
 * A built-in suite by name. `seed-card` reproduces the seed's table with its n (rows that need official
 * files read them from `dataDir`); `quick` has the same rows on small n and the shipped samples.
 */
export function builtinSuite(name: string, options: { dataDir?: string } = {}): Suite | undefined {
  const titles = seedEnvironments()
    .map((env) => env.title ?? env.id)
    .join(", ");
  if (name === "seed-card") {
    return parseSuite({ name, description: `The seed's evaluation table: ${titles}.`, rows: seedRows({ dataDir: options.dataDir, quick: false }) });
  }
  if (name === "quick") {
    return parseSuite({ name, description: "The seed-card rows on small n and the shipped samples (smoke test).", rows: seedRows({ quick: true }) });
  }
  if (isEnvironmentId(name)) {
    const env = getEnvironment(name);
    return parseSuite({ name, description: `The ${name} environment, default config.`, rows: [row(env, 100, {})] });
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
