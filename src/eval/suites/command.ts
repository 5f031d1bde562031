import { existsSync } from "node:fs";
import { requireBuiltinSuite } from "./builtin.ts";
import { NOT_AVAILABLE, type SuiteManifest } from "./run-suite.ts";
import { loadSuiteFile, type Suite } from "./suite.ts";

/** A built-in suite name, or a path to a .json/.yaml suite file. */
export function resolveSuite(nameOrFile: string, options: { dataDir?: string } = {}): Suite {
  if (/\.(json|ya?ml)$/i.test(nameOrFile) || existsSync(nameOrFile)) return loadSuiteFile(nameOrFile);
  return requireBuiltinSuite(nameOrFile, options);
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
