import type { Command } from "commander";
import { UsageError } from "../../core/index.ts";
import { OFFICIAL_SCORERS } from "../../envs/multihop/export-predictions.ts";
import { formatOfficialOutput, metricValues } from "../../envs/multihop/score-files.ts";
import type { CommandContext } from "../io.ts";
import { parseInputFile, requireInputFile } from "../options.ts";

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

const DATASETS = Object.keys(OFFICIAL_SCORERS);

/** Scores and prints through `output` (the command's streams, or a test's collector). */
export function runScoreCommand(dataset: string, options: ScoreOptions, output: ScoreOutput): void {
  const scorer = Object.hasOwn(OFFICIAL_SCORERS, dataset) ? OFFICIAL_SCORERS[dataset as keyof typeof OFFICIAL_SCORERS] : undefined;
  if (!scorer) throw new UsageError({ code: "DATASET_UNKNOWN", message: `unknown dataset '${dataset}'; use ${DATASETS.join(" or ")}` });
  if (options.aliases && !scorer.acceptsAliases)
    throw new UsageError({ code: "OPTION_CONFLICT", message: `--aliases does not apply to ${dataset} (its aliases are inside the gold file)` });
  const result = scorer.score({
    goldFile: requireInputFile("--gold", options.gold),
    predictionFile: requireInputFile("--pred", options.pred),
    ...(options.aliases ? { aliasesFile: requireInputFile("--aliases", options.aliases) } : {}),
  });
  for (const note of result.notes) output.err(`toolgym: note: ${note}\n`);
  if (options.json)
    output.out(`${JSON.stringify({ dataset: result.dataset, n: result.n, metrics: metricValues(result), messages: result.messages }, null, 2)}\n`);
  else output.out(`${formatOfficialOutput(result)}\n`);
}

export function registerScore(program: Command, { io }: CommandContext): void {
  program
    .command("score")
    .description(
      `Score a prediction file with the official metrics: ${DATASETS.map((name) => `${name} (${OFFICIAL_SCORERS[name as keyof typeof OFFICIAL_SCORERS].description})`).join(", ")}.`,
    )
    .argument("<dataset>", DATASETS.join(" | "))
    .requiredOption("--gold <file>", "the official gold (dev) file", parseInputFile("--gold"))
    .requiredOption("--pred <file>", "predictions in the official format (toolgym export RUN --format DATASET writes one)", parseInputFile("--pred"))
    .option("--aliases <file>", "2Wiki id_aliases.json (JSON Lines); without it answers are scored with no alias expansion", parseInputFile("--aliases"))
    .option("--json", "print {dataset, n, metrics} as JSON instead of the official script's output")
    .action((dataset: string, options: ScoreOptions) =>
      runScoreCommand(dataset, options, { out: (text) => io.stdout.write(text), err: (text) => io.stderr.write(text) }),
    );
}
