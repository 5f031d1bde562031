import { createWriteStream } from "node:fs";
import { once } from "node:events";
import type { Command } from "commander";
import { UsageError } from "../../core/index.ts";
import { prepareTau2Sft } from "../../data/sft/pipeline.ts";
import { formatSftReport } from "../../data/sft/stats.ts";
import { generateTau2Lines } from "../../data/synth/generate.ts";
import { parseInteger } from "../options.ts";

function parseBoolean(value: string): boolean {
  if (value === "true") return true;
  if (value === "false") return false;
  throw new UsageError({ message: `--enable-thinking must be true or false, got '${value}'` });
}

export function registerSft(program: Command, setExitCode: (code: number) => void): void {
  const sft = program.command("sft").description("Prepare supervised fine-tuning data.");
  sft
    .command("tau2")
    .description("Tau2 trajectories (AReaL-tau2-data layout) → pretokenised rows {input_ids, labels, assistant_masks, metadata} for TRL's SFTTrainer.")
    .argument("<input>", "Tau2 SFT JSONL file ({messages, answer, metadata} per line)")
    .requiredOption("--model-dir <dir>", "tokenizer directory: tokenizer.json, tokenizer_config.json, chat_template.jinja")
    .requiredOption("--out <file>", "output file, .jsonl or .parquet (a .report.json is written beside it)")
    .option("--max-tokens <n>", "context window; longer rows are truncated", parseInteger("--max-tokens"), 32768)
    .option("--only-correct", "keep only rows with metadata.correct == 1")
    .option("--enable-thinking <bool>", "pass enable_thinking to the chat template (default: not passed)", parseBoolean)
    .option("--workers <n>", "worker threads (0 = in process)", parseInteger("--workers"), 2)
    .action(
      async (
        input: string,
        options: { modelDir: string; out: string; maxTokens: number; onlyCorrect?: boolean; enableThinking?: boolean; workers: number },
      ) => {
        if (options.workers < 0) throw new UsageError({ message: "--workers must be 0 or more" });
        const report = await prepareTau2Sft({
          input,
          output: options.out,
          modelDirectory: options.modelDir,
          maxTokens: options.maxTokens,
          onlyCorrect: options.onlyCorrect ?? false,
          enableThinking: options.enableThinking,
          workers: options.workers,
        });
        process.stdout.write(`${formatSftReport(report)}\nwrote ${options.out} and ${options.out}.report.json\n`);
        if (report.rows_out === 0) setExitCode(1);
      },
    );
  sft
    .command("synth")
    .description("Write realistic synthetic Tau2-format SFT lines (airline/retail/telecom) for tests and benchmarks.")
    .requiredOption("--n <n>", "number of lines", parseInteger("--n"))
    .requiredOption("--out <file>", "output JSONL file")
    .option("--seed <seed>", "seed", parseInteger("--seed"), 0)
    .action(async (options: { n: number; out: string; seed: number }) => {
      if (options.n < 1) throw new UsageError({ message: "--n must be at least 1" });
      const stream = createWriteStream(options.out);
      for (const line of generateTau2Lines({ n: options.n, seed: options.seed })) {
        if (!stream.write(`${line}\n`)) await once(stream, "drain");
      }
      stream.end();
      await once(stream, "finish");
      process.stdout.write(`wrote ${options.n} lines to ${options.out}\n`);
    });
}
