import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { UsageError, parseConfig, type AnyEnvironment } from "../../core/index.ts";
import { ENVIRONMENTS } from "../../envs/registry.ts";
import type { ProgressStream } from "../progress.ts";
import { runEvaluation, type ModelSpec } from "../run-evaluation.ts";
import { seedDataFiles } from "./builtin.ts";
import type { Suite, SuiteRow } from "./suite.ts";

/** A model to evaluate: `LABEL=URL[,URL…]#MODEL` on the command line. */
export interface ModelTarget {
  label: string;
  baseUrls: string[];
  name: string;
}

/** The label of the scripted agents' column when a suite runs without --model. */
export const SCRIPTED_LABEL = "scripted";

export const SUITE_MANIFEST = "suite.json";
export const NOT_AVAILABLE = "environment not available";

export interface ManifestRow extends SuiteRow {
  status: "ran" | typeof NOT_AVAILABLE;
  reason: string | null;
  runs: Array<{ model: string; directory: string }>;
}

export interface SuiteManifest {
  schemaVersion: 1;
  suite: string;
  description: string;
  createdAt: string;
  models: string[];
  rows: ManifestRow[];
}

/** Turns `--model LABEL=URL#MODEL` values into harness model specs sharing the same generation settings. */
export function modelSpecs(
  values: readonly string[],
  shared: Omit<Extract<ModelSpec, { kind: "openai" }>, "kind" | "label" | "name" | "baseUrls"> = {},
): ModelSpec[] {
  return values.map((value) => {
    const target = parseModelTarget(value);
    return { kind: "openai", ...shared, label: target.label, name: target.name, baseUrls: target.baseUrls };
  });
}

export function parseModelTarget(text: string): ModelTarget {
  const match = /^([A-Za-z0-9][\w.-]*)=([^#]+)#(.+)$/.exec(text.trim());
  if (!match)
    throw new UsageError({ code: "MODEL_INVALID", message: `--model '${text}' is not LABEL=URL#MODEL, e.g. base=http://127.0.0.1:8000/v1#Qwen/Qwen3-4B` });
  const baseUrls = (match[2] as string)
    .split(",")
    .map((url) => url.trim())
    .filter(Boolean);
  for (const url of baseUrls) {
    if (!/^https?:\/\//.test(url)) throw new UsageError({ code: "MODEL_INVALID", message: `--model '${text}': '${url}' is not an http(s) URL` });
  }
  return { label: match[1] as string, baseUrls, name: match[3] as string };
}

/** Checks the official dev files a row reads from its `data_dir` before any episode runs. */
function checkDataFiles(row: SuiteRow): void {
  const file = seedDataFiles()[row.env];
  const dataDir = row.config.data_dir;
  if (!file || typeof dataDir !== "string") return;
  if (!existsSync(dataDir) || !statSync(dataDir).isDirectory())
    throw new UsageError({
      code: "SUITE_DATA_MISSING",
      message: `${row.benchmark}: data_dir '${dataDir}' is not a directory; pass --data-dir with the official dev files`,
    });
  if (!existsSync(join(dataDir, file))) {
    throw new UsageError({
      code: "SUITE_DATA_MISSING",
      message: `${row.benchmark}: ${join(dataDir, file)} does not exist; pass --data-dir with the official ${file}`,
    });
  }
}

/**
 * Runs every row of a suite for every model (same seeds and tasks for all) through the eval harness, or
 * with each environment's default genuine scripted agent (e.g. the oracle) when no model is given. Rows
 * whose environment is not registered are kept in the manifest (`suite.json`) as "environment not
 * available", so reports show them instead of dropping them.
 */
export async function runSuite(options: {
  suite: Suite;
  models?: ModelSpec[];
  out: string;
  quiet?: boolean;
  concurrency?: number;
  /** Where each run's progress bar is drawn (none without a stream). */
  progress?: ProgressStream;
  signal?: AbortSignal;
  /** Turn limit per episode for every row (default: each environment's). */
  maxTurns?: number;
}): Promise<SuiteManifest> {
  const requested: ModelSpec[] = options.models && options.models.length > 0 ? options.models : [{ kind: "scripted" }];
  // Scripted agents share one column ("scripted") across rows, whatever each environment's policy is called.
  const models = requested.map((model): ModelSpec => (model.kind === "scripted" ? { ...model, label: model.label ?? SCRIPTED_LABEL } : model));
  const labels = new Set<string>();
  for (const model of models) {
    const label = model.label ?? SCRIPTED_LABEL;
    if (labels.has(label))
      throw new UsageError({ code: "MODEL_DUPLICATE", message: `--model label '${label}' is given twice; labels name the table's columns and must differ` });
    labels.add(label);
  }
  const registered = ENVIRONMENTS as Record<string, AnyEnvironment>;
  const prepared = options.suite.rows.map((row) => {
    const env = Object.hasOwn(registered, row.env) ? registered[row.env] : undefined;
    if (!env && !row.planned)
      throw new UsageError({
        code: "ENV_UNKNOWN",
        message: `suite ${options.suite.name}, row ${row.benchmark}: unknown environment '${row.env}'; available: ${Object.keys(registered).join(", ")} (mark a row for an environment not built yet with planned: true)`,
      });
    if (!env) return { row, env: undefined, config: undefined, split: row.split ?? "" };
    checkDataFiles(row);
    return { row, env, config: parseConfig(env.id, env.configSchema, row.config), split: row.split ?? env.defaultSplit };
  });
  // One suite per --out: a second would overwrite suite.json, and a report over the folder would mix both.
  const existing = join(options.out, SUITE_MANIFEST);
  if (existsSync(existing))
    throw new UsageError({
      code: "OUT_EXISTS",
      message: `${options.out} already holds a suite run (${existing}); pass another --out (each suite run gets its own folder)`,
    });
  mkdirSync(options.out, { recursive: true });
  const manifest: SuiteManifest = {
    schemaVersion: 1,
    suite: options.suite.name,
    description: options.suite.description,
    createdAt: new Date().toISOString(),
    models: [...labels],
    rows: [],
  };
  const save = () => writeFileSync(join(options.out, SUITE_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const { row, env, config, split } of prepared) {
    // Stopped (Ctrl-C): the interrupted row's run is on disk; the rows after it are not started.
    if (options.signal?.aborted) break;
    if (!env) {
      manifest.rows.push({
        ...row,
        status: NOT_AVAILABLE,
        reason: `environment '${row.env}' is not registered in this toolgym (available: ${Object.keys(registered).join(", ")})`,
        runs: [],
      });
      save();
      continue;
    }
    const entry: ManifestRow = { ...row, split, status: "ran", reason: null, runs: [] };
    manifest.rows.push(entry);
    const mode = typeof row.config.mode === "string" ? row.config.mode : null;
    const summaries = await runEvaluation({
      rows: [
        {
          env,
          config,
          split,
          seed: row.seed,
          n: row.n,
          benchmark: row.benchmark,
          metrics: row.metrics,
          mode,
          ...(options.maxTurns ? { maxTurns: options.maxTurns } : {}),
        },
      ],
      models: models.map((model) => (model.kind === "scripted" && row.agent ? { ...model, policy: row.agent } : model)),
      out: options.out,
      quiet: options.quiet,
      concurrency: options.concurrency,
      ...(options.progress ? { progress: options.progress } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    for (const summary of summaries) entry.runs.push({ model: summary.model, directory: relative(options.out, summary.dir) });
    save();
  }
  save();
  return manifest;
}
