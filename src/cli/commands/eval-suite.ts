import { join } from "node:path";
import { UsageError } from "../../core/index.ts";
import type { ModelSpec } from "../../eval/run-evaluation.ts";
import { formatManifest, resolveSuite } from "../../eval/suites/command.ts";
import { runSuite } from "../../eval/suites/run-suite.ts";
import { EXIT_INTERRUPTED, EXIT_OK } from "../errors.ts";
import type { CliIo } from "../io.ts";
import { requireInputFile } from "../options.ts";

function timestamp(): string {
  return new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}

/** `toolgym eval --suite NAME|FILE`: runs every row for every model and prints where it wrote (on the command's stdout). */
export async function runSuiteForCli(
  options: { suite: string; models: ModelSpec[]; dataDir?: string; out?: string; quiet?: boolean; concurrency?: number; maxTurns?: number },
  io: CliIo,
): Promise<number> {
  // A suite file that is not there is the user's mistake (exit 2), like every other missing input.
  if (/\.(json|ya?ml)$/i.test(options.suite)) requireInputFile("--suite", options.suite);
  const suite = resolveSuite(options.suite, { dataDir: options.dataDir });
  // The seed card's numbers are only the seed's when they come from the official dev files.
  if (suite.name === "seed-card" && !options.dataDir) {
    throw new UsageError({
      code: "SUITE_DATA_MISSING",
      message: "--suite seed-card reads the official dev files: pass --data-dir DIR (or use --suite quick for the shipped samples)",
    });
  }
  const out = options.out ?? join("runs", `${suite.name.replace(/[^\w.-]+/g, "_")}-${timestamp()}`);
  // Ctrl-C stops the running row cleanly (its run is marked interrupted) and no further row starts.
  const signal = io.interrupts?.();
  const manifest = await runSuite({
    suite,
    models: options.models,
    out,
    quiet: options.quiet,
    concurrency: options.concurrency,
    progress: io.stderr,
    ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    ...(signal ? { signal } : {}),
  });
  if (signal?.aborted) {
    io.stdout.write(`${formatManifest(manifest)}\n`);
    io.stderr.write(
      `toolgym: interrupted in row ${manifest.rows.length} of ${suite.rows.length} (${manifest.rows.at(-1)?.benchmark ?? "none"}); the runs so far are in ${out}, the stopped one marked interrupted; run the suite again to finish [INTERRUPTED]\n`,
    );
    return EXIT_INTERRUPTED;
  }
  io.stdout.write(`${formatManifest(manifest)}\n\nnext: npx toolgym report ${out} --card\n`);
  return EXIT_OK;
}
