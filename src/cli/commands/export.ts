import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { DataError, UsageError, type ExportEpisode, type JsonValue } from "../../core/index.ts";
import { getEnvironment, listEnvironments } from "../../envs/registry.ts";
import { METADATA_FILE, RESULTS_FILE, readMetadata, scanResults } from "../../runs/reader.ts";
import type { CommandContext } from "../io.ts";
import { parseText, requireDirectory } from "../options.ts";
import { FORCE_OPTION, STDOUT, checkOutputPath, writeOutputAtomically } from "../output-file.ts";

interface ExportOptions {
  force?: boolean;
  format: string;
  out: string;
}

/** Every export format any environment offers, for the error message and `--help`. */
function allFormats(): string[] {
  return [...new Set(listEnvironments().flatMap((env) => Object.keys(env.exports ?? {})))];
}

/** The run's episodes as exporters read them, through the run format's one reader (its policy for bad lines). */
function readEpisodes(directory: string): ExportEpisode[] {
  const episodes: ExportEpisode[] = [];
  scanResults(join(directory, RESULTS_FILE), (record) => {
    const timing = record.info.timing as { startedAt?: unknown; durationMs?: unknown } | undefined;
    episodes.push({
      exampleId: record.example_id,
      trajectory: (record.info.trajectory ?? null) as JsonValue,
      metrics: record.metrics,
      id: record.id,
      trial: record.trial ?? record.sample,
      ...(record.trial_seed !== undefined ? { trialSeed: record.trial_seed } : {}),
      reward: record.reward,
      status: record.status,
      ...(typeof timing?.startedAt === "string" ? { startedAt: timing.startedAt } : {}),
      ...(typeof timing?.durationMs === "number" ? { durationMs: timing.durationMs } : {}),
    });
  });
  return episodes;
}

export function registerExport(program: Command, { io }: CommandContext): void {
  program
    .command("export")
    .description("Write an eval run in another tool's format, e.g. official prediction files that toolgym score reads.")
    .argument("<run-dir>", "one run directory (holding metadata.json and results.jsonl)")
    .requiredOption("--format <format>", `output format (${allFormats().join(", ")})`, parseText("--format"))
    .requiredOption("--out <file>", "file to write ('-' for stdout)", parseText("--out"))
    .option(...FORCE_OPTION)
    .action(async (runDirectory: string, options: ExportOptions) => {
      requireDirectory("run directory", runDirectory);
      if (options.out !== STDOUT) checkOutputPath(options.out, { force: options.force });
      if (!existsSync(join(runDirectory, METADATA_FILE)))
        throw new UsageError({
          code: "RUN_NOT_FOUND",
          message: `'${runDirectory}' is not a run directory (no ${METADATA_FILE}); pass one runs/<env>--<label>/<run-id> directory`,
        });
      const envId = readMetadata(runDirectory).env.id;
      const env = getEnvironment(envId);
      const exporter = env.exports?.[options.format];
      if (!exporter) {
        const offered = Object.keys(env.exports ?? {});
        throw new UsageError({
          code: "EXPORT_FORMAT_UNKNOWN",
          message: `${env.id} runs cannot be exported as '${options.format}'; ${offered.length > 0 ? `formats for ${env.id}: ${offered.join(", ")}` : `${env.id} offers no export format`}`,
        });
      }
      const episodes = readEpisodes(runDirectory);
      if (episodes.length === 0) throw new DataError({ code: "RUN_EMPTY", file: join(runDirectory, "results.jsonl"), message: "has no episodes to export" });
      const metadata = readMetadata(runDirectory) as unknown as Record<string, JsonValue>;
      const where = options.out === STDOUT ? "standard output" : options.out;
      if (options.out === STDOUT) io.stdout.write(exporter.write(episodes, { metadata }));
      else await writeOutputAtomically(options.out, (path) => writeFileSync(path, exporter.write(episodes, { metadata })), { force: options.force });
      io.stderr.write(`exported ${episodes.length} episodes of ${runDirectory} as ${options.format} to ${where}\n`);
    });
}
