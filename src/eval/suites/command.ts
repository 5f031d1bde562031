import { existsSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../../core/index.ts";
import type { ModelSpec } from "../run-evaluation.ts";
import { requireBuiltinSuite, seedDataFiles } from "./builtin.ts";
import { NOT_AVAILABLE, modelSpecs, runSuite, type SuiteManifest } from "./run-suite.ts";
import { loadSuiteFile, type Suite } from "./suite.ts";

export interface SuiteCommandOptions {
  suite: string;
  /** `LABEL=URL#MODEL` values (repeatable), or model specs already parsed by the eval command. */
  model?: string | string[];
  models?: ModelSpec[];
  dataDir?: string;
  out?: string;
  quiet?: boolean;
  concurrency?: number;
  /** Generation settings shared by every --model (sampling, chat-template kwargs, API key...). */
  shared?: Omit<Extract<ModelSpec, { kind: "openai" }>, "kind" | "label" | "name" | "baseUrls">;
}

/** A built-in suite name, or a path to a .json/.yaml suite file. */
export function resolveSuite(nameOrFile: string, options: { dataDir?: string } = {}): Suite {
  if (/\.(json|ya?ml)$/i.test(nameOrFile) || existsSync(nameOrFile)) return loadSuiteFile(nameOrFile);
  return requireBuiltinSuite(nameOrFile, options);
}

function timestamp(): string {
  return new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}

export function formatManifest(manifest: SuiteManifest): string {
  const lines = [`suite ${manifest.suite}: ${manifest.rows.length} rows × ${manifest.models.length} model(s)`];
  for (const row of manifest.rows) {
    lines.push(
      row.status === NOT_AVAILABLE
        ? `  ${row.benchmark.padEnd(18)} ${NOT_AVAILABLE}: ${row.reason}`
        : `  ${row.benchmark.padEnd(18)} ${row.runs.map((run) => `${run.model} → ${run.directory}`).join(", ")}`,
    );
  }
  return lines.join("\n");
}

/** `toolgym eval --suite NAME|FILE [--model LABEL=URL#MODEL]… [--data-dir DIR]`: runs and prints where it wrote. */
export async function runSuiteCommand(options: SuiteCommandOptions): Promise<number> {
  const values = options.model === undefined ? [] : Array.isArray(options.model) ? options.model : [options.model];
  const suite = resolveSuite(options.suite, { dataDir: options.dataDir });
  if (suite.name === "seed-card" && !options.dataDir) {
    throw new UsageError({
      code: "SUITE_DATA_MISSING",
      message: `--suite seed-card reads the official dev files: pass --data-dir DIR holding ${Object.values(seedDataFiles()).join(" and ")} (or use --suite quick for the shipped samples)`,
    });
  }
  const out = options.out ?? join("runs", `${suite.name.replace(/[^\w.-]+/g, "_")}-${timestamp()}`);
  const models = options.models ?? modelSpecs(values, options.shared);
  const manifest = await runSuite({ suite, models, out, quiet: options.quiet, concurrency: options.concurrency });
  process.stdout.write(`${formatManifest(manifest)}\n\nnext: npx toolgym report ${out} --card\n`);
  return 0;
}
