import { multihopWatch } from "./signatures.ts";
import { z } from "zod";
import { defineEnvironment, type JsonValue, type SuiteEntry } from "../../core/index.ts";
import { multihopAudit } from "./policies/audit.ts";
import { multihopPolicies } from "./policies/index.ts";
import { wikiGoldAnswers } from "./2wiki-metric.ts";
import { getDataset, namedDataFiles, prepareDataset, resolveDataSource, type MultihopDatasetId } from "./dataset.ts";
import { MODES, startEpisode, type MultihopTask } from "./episode.ts";
import { musiquePredictions, wikiPredictions } from "./export-predictions.ts";
import { summarizeMusique } from "./musique-full.ts";

/**
 * `musique` and `2wiki`: the MuSiQue-Ans and 2WikiMultihopQA dev sets as environments, scored with
 * each dataset's official answer F1 (EM reported beside it). Task index i is example i mod N of the
 * loaded file, in file order; the seed is not used. See about.md.
 */
const baseConfig = {
  /** context: paragraphs in the prompt; search: tools over the example's paragraphs; pool: tools over the whole file; closed_book: question only. */
  mode: z.enum(MODES).default("search"),
  /** Directory holding the official file names (musique_ans_v1.0_dev.jsonl; dev.json + id_aliases.json). */
  data_dir: z.string().min(1).optional(),
  /** Path of the dev file itself (overrides data_dir). */
  file: z.string().min(1).optional(),
  /** Skip malformed records (their count is reported) instead of failing on the first one. */
  skip_bad: z.boolean().default(false),
  /** Default number of search hits. */
  top_k: z.number().int().min(1).max(10).default(5),
  /** Turn limit in the tool modes (text modes take one reply). */
  max_turns: z.number().int().min(2).max(64).default(12),
};

const musiqueConfig = z.strictObject({
  ...baseConfig,
  /** With data_dir: ans reads musique_ans_v1.0_dev.jsonl, full reads musique_full_v1.0_dev.jsonl (answerable + unanswerable twins). */
  subset: z.enum(["ans", "full"]).default("ans"),
});
const wikiConfig = z.strictObject({
  ...baseConfig,
  /** id_aliases.json of the data_ids release (JSON Lines); default: beside dev.json in data_dir. */
  aliases_file: z.string().min(1).optional(),
});

export type MusiqueConfig = z.infer<typeof musiqueConfig>;
export type WikiConfig = z.infer<typeof wikiConfig>;
export type { MultihopTask } from "./episode.ts";

function generateTask(dataset: MultihopDatasetId, config: WikiConfig | MusiqueConfig, index: number): MultihopTask {
  const source = resolveDataSource(dataset, config);
  const loaded = getDataset(source);
  const count = loaded.examples.length;
  const position = ((index % count) + count) % count;
  const example = loaded.examples[position] as MultihopTask["example"];
  const golds = dataset === "musique" ? [example.answer, ...example.aliases] : wikiGoldAnswers(example.answer, example.answerId, loaded.aliases);
  const isTools = config.mode === "search" || config.mode === "pool";
  return {
    dataset,
    mode: config.mode,
    source,
    position,
    count,
    skipped: loaded.skipped,
    example,
    golds,
    topK: config.top_k,
    maxTurns: isTools ? config.max_turns : 1,
    full: loaded.hasUnanswerable,
  };
}

function publicView(task: MultihopTask): JsonValue {
  const view: Record<string, JsonValue> = { dataset: task.dataset, mode: task.mode, id: task.example.id, question: task.example.question };
  if (task.mode === "context") view.paragraphs = task.example.paragraphs.map((paragraph) => ({ title: paragraph.title, text: paragraph.text }));
  return view;
}

/**
 * Answers can appear in a question by design (2Wiki comparisons name both candidates), so the secrets are
 * the solution's field names and, outside the context mode, the text of the supporting paragraphs.
 */
function secrets(task: MultihopTask): string[] {
  const fields = ['"answer"', "is_supporting", "supporting_facts", "question_decomposition", "golds"];
  if (task.mode === "context") return fields;
  return [...fields, ...task.example.paragraphs.filter((paragraph) => paragraph.supporting).map((paragraph) => paragraph.text)];
}

function solution(task: MultihopTask): JsonValue {
  return {
    answer: task.example.answer,
    answerable: task.example.answerable,
    golds: task.golds,
    supporting_titles: task.example.paragraphs.filter((paragraph) => paragraph.supporting).map((paragraph) => paragraph.title),
  };
}

/** The seed-card row: the official dev file from `--data-dir`; `quick` and no data dir use the shipped sample. */
function seedSuite(order: number, n: number, officialFile: string): SuiteEntry {
  return {
    order,
    n,
    quickN: 8,
    config: { mode: "search" },
    seedConfig: (dataDir) => ({ mode: "search", data_dir: dataDir }),
    dataDirHint: officialFile,
  };
}

export const musiqueEnvironment = defineEnvironment<MusiqueConfig, MultihopTask>({
  id: "musique",
  // 2: the tool schemas no longer give a dev record's answer and title words as examples.
  version: "2",
  title: "MuSiQue",
  family: "multihop",
  policies: multihopPolicies,
  audit: multihopAudit(),
  watch: multihopWatch,
  metrics: ["em", "f1"],
  seedSuite: seedSuite(1, 2417, "musique_ans_v1.0_dev.jsonl"),
  description: "MuSiQue-Ans or MuSiQue-Full dev (official answer EM/F1; Full adds the unanswerable answer), modes context | search | pool | closed_book.",
  protocol: "tools",
  splits: ["dev"],
  defaultSplit: "dev",
  configSchema: musiqueConfig,
  maxTurns: (task) => task.maxTurns,
  generate: ({ index, config }) => generateTask("musique", config, index),
  taskCount: ({ config }) => getDataset(resolveDataSource("musique", config)).examples.length,
  notes: ({ config }) => getDataset(resolveDataSource("musique", config)).notes,
  exports: { musique: musiquePredictions },
  summary: { key: "musique", label: "MuSiQue official", summarize: summarizeMusique },
  publicView,
  solution,
  secrets,
  externalConfig: { file: "file", data_dir: "directory" },
  dataFiles: (config) => namedDataFiles(resolveDataSource("musique", config), config),
  prepare: (config) => prepareDataset(resolveDataSource("musique", config)),
  start: startEpisode,
});

export const wikiEnvironment = defineEnvironment<WikiConfig, MultihopTask>({
  id: "2wiki",
  // 2: the tool schemas no longer give a dev record's answer and title words as examples.
  version: "2",
  title: "2WikiMultihopQA",
  family: "multihop",
  policies: multihopPolicies,
  audit: multihopAudit(),
  watch: multihopWatch,
  metrics: ["em", "f1"],
  seedSuite: seedSuite(2, 12576, "dev.json"),
  description: "2WikiMultihopQA dev (official v1.1 answer EM/F1), modes context | search | pool | closed_book.",
  protocol: "tools",
  splits: ["dev"],
  defaultSplit: "dev",
  configSchema: wikiConfig,
  maxTurns: (task) => task.maxTurns,
  generate: ({ index, config }) => generateTask("2wiki", config, index),
  taskCount: ({ config }) => getDataset(resolveDataSource("2wiki", config)).examples.length,
  notes: ({ config }) => getDataset(resolveDataSource("2wiki", config)).notes,
  exports: { "2wiki": wikiPredictions },
  publicView,
  solution,
  secrets,
  externalConfig: { file: "file", data_dir: "directory", aliases_file: "file" },
  dataFiles: (config) => namedDataFiles(resolveDataSource("2wiki", config), config),
  prepare: (config) => prepareDataset(resolveDataSource("2wiki", config)),
  start: startEpisode,
});
