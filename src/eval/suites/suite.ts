import { readFileSync } from "node:fs";
import { extname } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { UsageError } from "../../core/index.ts";

/**
 * A suite is a named list of benchmark rows. Each row runs one environment with one config on `n` tasks
 * of one (split, seed); `metrics` names the per-episode values the report shows (keys of a result's
 * `metrics`, with `reward` meaning the total).
 */
export const suiteRowSchema = z.strictObject({
  /** Row name in reports and the card, e.g. "musique". */
  benchmark: z.string().min(1),
  /** Display name, e.g. "MuSiQue"; defaults to `benchmark`. */
  title: z.string().min(1).optional(),
  env: z.string().min(1),
  config: z.record(z.string(), z.unknown()).default({}),
  /** Defaults to the environment's default split. */
  split: z.string().min(1).optional(),
  n: z.number().int().positive(),
  seed: z.number().int().default(0),
  metrics: z.array(z.string().min(1)).min(1).default(["reward"]),
  /** Scripted policy for runs without --model; defaults to the environment's first genuine policy. */
  agent: z.string().min(1).optional(),
  /**
   * A row for an environment this toolgym does not have yet: kept in the report as "environment not available".
   * Without it an unknown `env` is refused (a typo such as `mokc` must not pass as a row that was not run).
   */
  planned: z.boolean().optional(),
});
export type SuiteRow = z.infer<typeof suiteRowSchema>;

export const suiteSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().default(""),
  rows: z.array(suiteRowSchema).min(1),
});
export type Suite = z.infer<typeof suiteSchema>;

/** Validates a suite object; errors name the file and the offending field path. */
export function parseSuite(value: unknown, source = "suite"): Suite {
  const parsed = suiteSchema.safeParse(value);
  if (parsed.success) {
    const names = new Set<string>();
    for (const row of parsed.data.rows) {
      if (names.has(row.benchmark)) {
        throw new UsageError({ code: "SUITE_INVALID", message: `${source}: two rows are named '${row.benchmark}'; give each row a distinct 'benchmark'` });
      }
      names.add(row.benchmark);
    }
    return parsed.data;
  }
  const issue = parsed.error.issues[0];
  const path = issue ? issue.path.map(String).join(".") : "";
  // The suite file is the user's input, like a command line: its mistakes are usage errors (exit 2).
  throw new UsageError({
    code: "SUITE_INVALID",
    message: `${source}: ${path ? `field '${path}': ` : ""}${issue?.message ?? "invalid suite"}; a suite is {name, rows: [{benchmark, env, config?, split?, n, seed?, metrics?}]}`,
  });
}

/** Reads a user suite from a .json, .yaml or .yml file. */
export function loadSuiteFile(path: string): Suite {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "EISDIR" ? "it is a directory; name a .json or .yaml suite file" : (error as Error).message;
    throw new UsageError({ code: "SUITE_UNREADABLE", message: `--suite ${path}: cannot read the suite file (${reason})` });
  }
  const extension = extname(path).toLowerCase();
  let value: unknown;
  try {
    value = extension === ".yaml" || extension === ".yml" ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    const kind = extension === ".yaml" || extension === ".yml" ? "YAML" : "JSON";
    throw new UsageError({ code: "SUITE_UNREADABLE", message: `${path}: not valid ${kind} (${(error as Error).message.split("\n")[0]})` });
  }
  return parseSuite(value, path);
}
