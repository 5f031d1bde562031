import type { Command } from "commander";
import { UsageError } from "../../core/index.ts";
import { formatOfficialOutput, metricValues, scoreMusiqueFiles, scoreWikiFiles } from "../../envs/multihop/score-files.ts";

export interface ScoreOptions {
  gold: string;
  pred: string;
  aliases?: string;
  json?: boolean;
}

export interface ScoreOutput {
  out(text: string): void;
  err(text: string): void;
}

/** Scores and prints; `output` defaults to stdout/stderr (tests pass a collector). */
export function runScoreCommand(
  dataset: string,
  options: ScoreOptions,
  output: ScoreOutput = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) },
): void {
  if (dataset !== "musique" && dataset !== "2wiki") throw new UsageError({ message: `unknown dataset '${dataset}'; use musique or 2wiki` });
  if (dataset === "musique" && options.aliases) throw new UsageError({ message: "--aliases is for 2wiki; MuSiQue aliases are inside the gold file" });
  const result =
    dataset === "musique"
      ? scoreMusiqueFiles({ goldFile: options.gold, predictionFile: options.pred })
      : scoreWikiFiles({ goldFile: options.gold, predictionFile: options.pred, ...(options.aliases ? { aliasesFile: options.aliases } : {}) });
  for (const note of result.notes) output.err(`toolgym: note: ${note}\n`);
  if (options.json)
    output.out(`${JSON.stringify({ dataset: result.dataset, n: result.n, metrics: metricValues(result), messages: result.messages }, null, 2)}\n`);
  else output.out(`${formatOfficialOutput(result)}\n`);
}

export function registerScore(program: Command): void {
  program
    .command("score")
    .description("Score a prediction file with the official metrics: musique (evaluate_v1.0.py) or 2wiki (2wikimultihop_evaluate_v1.1.py).")
    .argument("<dataset>", "musique | 2wiki")
    .requiredOption("--gold <file>", "gold file: musique_ans_v1.0_dev.jsonl (MuSiQue) or dev.json of data_ids.zip (2Wiki)")
    .requiredOption("--pred <file>", "predictions in the official format (MuSiQue JSON Lines; 2Wiki {answer, sp, evidence})")
    .option("--aliases <file>", "2Wiki id_aliases.json (JSON Lines); without it answers are scored with no alias expansion")
    .option("--json", "print {dataset, n, metrics} as JSON instead of the official script's output")
    .action((dataset: string, options: ScoreOptions) => runScoreCommand(dataset, options));
}
