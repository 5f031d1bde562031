import { createWriteStream, existsSync, renameSync } from "node:fs";
import { join } from "node:path";
import { once } from "node:events";
import type { Command } from "commander";
import { DataError, UsageError } from "../../core/index.ts";
import { prepareTau2Sft } from "../../data/sft/pipeline.ts";
import { formatSftReport } from "../../data/sft/stats.ts";
import { generateTau2Lines } from "../../data/synth/generate.ts";
import { prepareTrajectorySft, writeTrajectoryConversations } from "../../data/sft/trajectories.ts";
import type { CommandContext } from "../io.ts";
import { parseInteger, parseNumber, parseText, requireDirectory, requireInputFile } from "../options.ts";
import { FORCE_OPTION, checkOutputPath, writeOutputAtomically } from "../output-file.ts";

/** How to get a tokenizer directory, named in the error when --model-dir is missing. */
const MODEL_DIR_HINT = "download a tokenizer with: huggingface-cli download Qwen/Qwen3-4B tokenizer.json tokenizer_config.json --local-dir ./Qwen3-4B";

/** `--model-dir`: a directory with the tokenizer files the rows are built from; anything else is a usage error (exit 2). */
function requireModelDirectory(directory: string): void {
  if (directory.trim() === "" || !existsSync(directory))
    throw new UsageError({ code: "MODEL_DIR_MISSING", message: `--model-dir: no such directory '${directory}'; ${MODEL_DIR_HINT}` });
  requireDirectory("--model-dir", directory);
  const missing = ["tokenizer.json", "tokenizer_config.json"].filter((name) => !existsSync(join(directory, name)));
  if (missing.length > 0)
    throw new UsageError({ code: "MODEL_DIR_INVALID", message: `--model-dir '${directory}' has no ${missing.join(" or ")}; ${MODEL_DIR_HINT}` });
}

/** The report written beside an output file; it is written beside the temporary file and renamed with it. */
const REPORT_SUFFIX = ".report.json";

/** A run where no row passed leaves no data file, but its report stays where the error says the reasons are. */
function keepReport(temporaryOutput: string, reportPath: string): void {
  renameSync(`${temporaryOutput}${REPORT_SUFFIX}`, reportPath);
}

function parseBoolean(value: string): boolean {
  if (value === "true") return true;
  if (value === "false") return false;
  throw new UsageError({ code: "OPTION_INVALID", message: `--enable-thinking must be true or false, got '${value}'` });
}

export function registerSft(program: Command, { io }: CommandContext): void {
  const sft = program.command("sft").description("Prepare supervised fine-tuning data.");
  sft
    .command("tau2")
    .description("Tau2 trajectories (AReaL-tau2-data layout) → pretokenised rows {input_ids, labels, assistant_masks, metadata} for TRL's SFTTrainer.")
    .argument("<input>", "Tau2 SFT JSONL file ({messages, answer, metadata} per line)")
    .requiredOption("--model-dir <dir>", "tokenizer directory: tokenizer.json, tokenizer_config.json, chat_template.jinja")
    .requiredOption("--out <file>", "output file, .jsonl or .parquet (a .report.json is written beside it)", parseText("--out"))
    .option(...FORCE_OPTION)
    .option("--max-tokens <n>", "context window; longer rows are truncated", parseInteger("--max-tokens", { min: 16 }), 32768)
    .option("--only-correct", "keep only rows with metadata.correct == 1")
    .option("--enable-thinking <bool>", "pass enable_thinking to the chat template (default: not passed)", parseBoolean)
    .option(
      "--normalize-whitespace",
      "not the seed's recipe: strip the target's reasoning at both ends and every assistant content on the left before rendering " +
        "(default: texts kept byte for byte). Changes the trained text; use it to keep rows whose prompt/target boundary whitespace " +
        "breaks the prefix check (e.g. with --enable-thinking false) instead of dropping them",
    )
    .option("--workers <n>", "worker threads (0 = in process; each more adds ~150 MB)", parseInteger("--workers", { min: 0, max: 64 }), 1)
    .action(
      async (
        input: string,
        options: {
          modelDir: string;
          out: string;
          maxTokens: number;
          onlyCorrect?: boolean;
          enableThinking?: boolean;
          normalizeWhitespace?: boolean;
          workers: number;
          force?: boolean;
        },
      ) => {
        requireInputFile("input", input);
        requireModelDirectory(options.modelDir);
        const reportPath = `${options.out}${REPORT_SUFFIX}`;
        checkOutputPath(options.out, { force: options.force });
        checkOutputPath(reportPath, { force: options.force });
        const signal = io.interrupts?.();
        // Lines read so far, on stderr every 2 s (the input's line count is not known before it is read).
        let shown = Date.now();
        const onProgress = (rowsIn: number) => {
          if (Date.now() - shown < 2000) return;
          shown = Date.now();
          io.stderr.write(`sft tau2: ${rowsIn.toLocaleString("en-US")} lines read\n`);
        };
        const report = await writeOutputAtomically(
          options.out,
          async (output) => {
            const written = await prepareTau2Sft({
              input,
              output,
              onProgress,
              outputName: options.out,
              modelDirectory: options.modelDir,
              maxTokens: options.maxTokens,
              onlyCorrect: options.onlyCorrect ?? false,
              enableThinking: options.enableThinking,
              normalizeWhitespace: options.normalizeWhitespace ?? false,
              workers: options.workers,
            });
            // No row passed: no data file is left behind; the report says why, line by line.
            if (written.rows_out === 0) {
              keepReport(output, reportPath);
              io.stdout.write(`${formatSftReport(written)}\n`);
              throw new DataError({
                code: "SFT_NO_ROWS",
                file: input,
                message: `no row passed the checks (${written.rows_in} read); the reasons are in ${reportPath}`,
              });
            }
            return written;
          },
          { force: options.force, companions: [REPORT_SUFFIX], ...(signal ? { signal } : {}) },
        );
        io.stdout.write(`${formatSftReport(report)}\nwrote ${options.out} and ${reportPath}\n`);
      },
    );
  sft
    .command("trajectories")
    .description("toolgym runs (results.jsonl) → one pretokenised row per assistant turn, conditioned on its history and the task's tools.")
    .argument("<run-dirs...>", "run directories written by toolgym eval, or folders holding them")
    .requiredOption("--model-dir <dir>", "tokenizer directory: tokenizer.json, tokenizer_config.json, chat_template.jinja")
    .requiredOption("--out <file>", "output file, .jsonl or .parquet (a .report.json is written beside it)", parseText("--out"))
    .option(...FORCE_OPTION)
    .option("--max-tokens <n>", "context window; longer rows are truncated", parseInteger("--max-tokens", { min: 16 }), 32768)
    .option("--min-reward <x>", "keep only episodes whose reward is at least x (default: every scored episode)", parseNumber("--min-reward"))
    .option("--enable-thinking <bool>", "pass enable_thinking to the chat template (default: not passed)", parseBoolean)
    .option("--workers <n>", "worker threads (0 = in process)", parseInteger("--workers", { min: 0, max: 64 }), 0)
    .action(
      async (
        runs: string[],
        options: { modelDir: string; out: string; maxTokens: number; minReward?: number; enableThinking?: boolean; workers: number; force?: boolean },
      ) => {
        for (const run of runs) requireDirectory("run directory", run);
        requireModelDirectory(options.modelDir);
        const reportPath = `${options.out}${REPORT_SUFFIX}`;
        checkOutputPath(options.out, { force: options.force });
        checkOutputPath(reportPath, { force: options.force });
        const report = await writeOutputAtomically(
          options.out,
          async (output) => {
            const written = await prepareTrajectorySft({
              runs,
              output,
              outputName: options.out,
              modelDirectory: options.modelDir,
              maxTokens: options.maxTokens,
              enableThinking: options.enableThinking,
              workers: options.workers,
              ...(options.minReward !== undefined ? { minReward: options.minReward } : {}),
            });
            if (written.rows_out === 0) {
              keepReport(output, reportPath);
              io.stdout.write(`${formatSftReport(written)}\n`);
              throw new DataError({
                code: "SFT_NO_ROWS",
                message: `no assistant turn passed the checks (${written.rows_in} read); the reasons are in ${reportPath}`,
              });
            }
            return written;
          },
          { force: options.force, companions: [REPORT_SUFFIX] },
        );
        io.stdout.write(`${formatSftReport(report)}\n${report.episodes} episodes; wrote ${options.out} and ${reportPath}\n`);
      },
    );
  sft
    .command("conversations")
    .description("toolgym runs (results.jsonl) → one {messages, tools} line per scored episode, tool-call arguments as objects (e.g. a tokenizer corpus).")
    .argument("<run-dirs...>", "run directories written by toolgym eval, or folders holding them")
    .requiredOption("--out <file>", "output JSONL file", parseText("--out"))
    .option(...FORCE_OPTION)
    .option("--min-reward <x>", "keep only episodes whose reward is at least x (default: every scored episode)", parseNumber("--min-reward"))
    .action(async (runs: string[], options: { out: string; minReward?: number; force?: boolean }) => {
      for (const run of runs) requireDirectory("run directory", run);
      checkOutputPath(options.out, { force: options.force });
      const count = await writeOutputAtomically(options.out, (output) => writeTrajectoryConversations(runs, output, options.minReward), {
        force: options.force,
      });
      io.stdout.write(`wrote ${count} conversations to ${options.out}\n`);
    });
  sft
    .command("synth")
    .description("Write realistic synthetic Tau2-format SFT lines (airline/retail/telecom) for tests and benchmarks.")
    .requiredOption("--n <n>", "number of lines", parseInteger("--n", { min: 1 }))
    .requiredOption("--out <file>", "output JSONL file", parseText("--out"))
    .option(...FORCE_OPTION)
    .option("--seed <seed>", "seed", parseInteger("--seed", { min: 0 }), 0)
    .action(async (options: { n: number; out: string; seed: number; force?: boolean }) => {
      await writeOutputAtomically(
        options.out,
        async (path) => {
          const stream = createWriteStream(path);
          for (const line of generateTau2Lines({ n: options.n, seed: options.seed })) {
            if (!stream.write(`${line}\n`)) await once(stream, "drain");
          }
          stream.end();
          await once(stream, "finish");
        },
        { force: options.force },
      );
      io.stdout.write(`wrote ${options.n} lines to ${options.out}\n`);
    });
}
