import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { UsageError } from "../../core/index.ts";
import { getEnvironment } from "../../envs/registry.ts";
import { rescoreRun } from "../../eval/rescore.ts";
import { METADATA_FILE, readMetadata } from "../../runs/reader.ts";
import type { CommandContext } from "../io.ts";
import { parseText, requireDirectory, requireHttpUrl } from "../options.ts";

interface RescoreCommandOptions {
  judgeModel?: string;
  out?: string;
  resume?: boolean;
}

/** `URL[,URL...]#NAME`: each URL an http(s) address, the name not empty (checked before anything is written). */
function checkModelAddress(text: string): void {
  const hash = text.lastIndexOf("#");
  const name = hash >= 0 ? text.slice(hash + 1) : "";
  const urls = (hash >= 0 ? text.slice(0, hash) : text).split(",").filter((url) => url !== "");
  if (name === "" || urls.length === 0)
    throw new UsageError({ code: "OPTION_INVALID", message: `--judge-model '${text}' must be URL#NAME, e.g. http://127.0.0.1:8000/v1#Qwen/Qwen3-0.6B` });
  for (const url of urls) requireHttpUrl("--judge-model", url);
}

const show = (value: number | null) => (value === null ? "not computed" : value.toFixed(3));

export function registerRescore(program: Command, { io }: CommandContext): void {
  program
    .command("rescore")
    .description(
      "Re-grade a saved run's recorded episodes with the current environment version into a new run beside it (label <label>.rescored); " +
        "tau2: NL assertions with --judge-model. Compare the two with `toolgym report RUN NEW_RUN`.",
    )
    .argument("<run-dir>", "a run directory written by toolgym eval (holding metadata.json)")
    .option("--judge-model <url#name>", "tau2: the NL-assertion judge, URL#NAME (merged into the run's config as judge_model)", parseText("--judge-model"))
    .option("--out <dir>", "root directory of the new run (default: the root the run is in)", parseText("--out"))
    .option("--resume", "continue a rescore that stopped part way (its episodes on disk are kept)")
    .action(async (runDirectory: string, options: RescoreCommandOptions) => {
      requireDirectory("run directory", runDirectory);
      if (!existsSync(join(runDirectory, METADATA_FILE)))
        throw new UsageError({
          code: "RUN_NOT_FOUND",
          message: `${runDirectory} is not a run directory (no ${METADATA_FILE}); pass <out>/<env>--<label>/<run-id>`,
        });
      if (options.judgeModel !== undefined) checkModelAddress(options.judgeModel);
      const env = getEnvironment(readMetadata(runDirectory).env.id);
      const result = await rescoreRun({
        directory: runDirectory,
        env,
        ...(options.judgeModel !== undefined ? { judgeModel: options.judgeModel } : {}),
        ...(options.out !== undefined ? { out: options.out } : {}),
        ...(options.resume ? { resume: true } : {}),
      });
      const { summary } = result;
      io.stdout.write(
        `rescored ${summary.total} episodes of ${env.id} (${summary.errored} errored, copied as they were): mean ${show(result.originalMean)} -> ${show(summary.mean)}, ` +
          `${result.changed} rewards changed\nwrote ${result.directory}\n`,
      );
    });
}
