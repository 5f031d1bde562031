import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DataError } from "../../core/index.ts";
import { finish, finishCooperatively, jsonArraySteps, jsonLinesSteps, type SkippedRecord } from "./read-records.ts";
import { parseMusiqueRecord, parseWikiRecord, type MultihopExample } from "./records.ts";

export type MultihopDatasetId = "musique" | "2wiki";

/** Official dev file names (what `data_dir` must contain) and the shipped 40-record samples. */
export const DATASET_FILES: Record<MultihopDatasetId, { official: string; full?: string; sample: string; aliases?: string }> = {
  musique: { official: "musique_ans_v1.0_dev.jsonl", full: "musique_full_v1.0_dev.jsonl", sample: "musique_dev_sample.jsonl" },
  "2wiki": { official: "dev.json", sample: "2wiki_dev_sample.json", aliases: "id_aliases.json" },
};

/** `assets/multihop/`, the default data when neither `file` nor `data_dir` is given. */
export const ASSET_DIRECTORY = fileURLToPath(new URL("../../../assets/multihop/", import.meta.url));

export interface DataSource {
  dataset: MultihopDatasetId;
  /** Absolute path of the dev file. */
  file: string;
  /** Absolute path of `id_aliases.json` (2Wiki), when one is used. */
  aliasesFile?: string;
  skipBad: boolean;
}

export interface MultihopDataset {
  source: DataSource;
  examples: MultihopExample[];
  /** Malformed records skipped in skip-bad mode (the first few kept as samples). */
  skipped: number;
  skippedSamples: SkippedRecord[];
  /** 2Wiki answer aliases: `answer_id` → aliases ∪ demonyms. */
  aliases: Map<string, Set<string>>;
  /** Some record is unanswerable (MuSiQue-Full): episodes then offer the "unanswerable" answer. */
  hasUnanswerable: boolean;
  /** What a run over this data should record about it (malformed records skipped); the caller reports them. */
  notes: string[];
}

/**
 * Resolves where the data comes from: `file` wins, then `data_dir` with the official file names (MuSiQue:
 * the Full file when `subset` is "full"), then the shipped samples. 2Wiki aliases: `aliases_file`, else `id_aliases.json` beside the dev file if present.
 */
export function resolveDataSource(
  dataset: MultihopDatasetId,
  config: { file?: string; data_dir?: string; aliases_file?: string; skip_bad?: boolean; subset?: "ans" | "full" },
): DataSource {
  const names = DATASET_FILES[dataset];
  const directory = config.data_dir ? resolve(config.data_dir) : undefined;
  const official = config.subset === "full" && names.full ? names.full : names.official;
  const file = config.file ? resolve(config.file) : directory ? join(directory, official) : join(ASSET_DIRECTORY, names.sample);
  let aliasesFile: string | undefined;
  if (names.aliases) {
    if (config.aliases_file) aliasesFile = resolve(config.aliases_file);
    else if (directory && existsSync(join(directory, names.aliases))) aliasesFile = join(directory, names.aliases);
  }
  return { dataset, file, ...(aliasesFile ? { aliasesFile } : {}), skipBad: config.skip_bad ?? false };
}

const cache = new Map<string, MultihopDataset>();
/** Loads under way, and failed ones, by cache key (prepareDataset). */
const loads = new Map<string, Promise<void>>();
const failures = new Map<string, unknown>();

function cacheKey(source: DataSource): string {
  return JSON.stringify([source.dataset, source.file, source.aliasesFile ?? null, source.skipBad]);
}

/** How a user fixes an aliases file given as the environment's config (`toolgym score` passes its own, naming --aliases). */
export const CONFIG_ALIASES_FIXES = {
  unreadable: "check aliases_file, or data_dir's id_aliases.json",
  malformed: "fix the line (JSON Lines of {Q_id, aliases, demonyms}) or point aliases_file at the official id_aliases.json",
};

/**
 * `id_aliases.json`: JSON Lines of `{Q_id, aliases, demonyms}` → `Q_id` → set(aliases + demonyms). Every
 * line must be valid (skip_bad is for dev files only), so the error names the caller's fix.
 */
export function loadWikiAliases(
  file: string,
  fixes: { unreadable: string; malformed: string } = CONFIG_ALIASES_FIXES,
  bytes?: Buffer,
): Map<string, Set<string>> {
  return finish(wikiAliasesSteps(file, fixes, bytes));
}

function* wikiAliasesSteps(file: string, fixes: { unreadable: string; malformed: string }, bytes?: Buffer): Generator<void, Map<string, Set<string>>> {
  const aliases = new Map<string, Set<string>>();
  yield* jsonLinesSteps({ file, fixes, bytes }, (value) => {
    const record = value as { Q_id?: unknown; aliases?: unknown; demonyms?: unknown };
    const list = (field: unknown, name: string): string[] => {
      if (!Array.isArray(field) || field.some((item) => typeof item !== "string")) throw new Error(`'${name}' must be a list of strings`);
      return field as string[];
    };
    if (typeof record !== "object" || record === null || typeof record.Q_id !== "string") throw new Error("each line must be an object with a string 'Q_id'");
    aliases.set(record.Q_id, new Set([...list(record.aliases, "aliases"), ...list(record.demonyms, "demonyms")]));
  });
  return aliases;
}

/** Loads a dev file (streaming, validating each record) without caching; `preloaded` holds bytes already read. */
export function loadDataset(source: DataSource, preloaded: { file?: Buffer; aliases?: Buffer } = {}): MultihopDataset {
  return finish(datasetSteps(source, preloaded));
}

/** `loadDataset` as steps of about a mebibyte each (a server runs them between other clients' requests). */
function* datasetSteps(source: DataSource, preloaded: { file?: Buffer; aliases?: Buffer }): Generator<void, MultihopDataset> {
  const examples: MultihopExample[] = [];
  const skippedSamples: SkippedRecord[] = [];
  let skipped = 0;
  const read = {
    file: source.file,
    bytes: preloaded.file,
    skipBad: source.skipBad,
    onSkip: (problem: SkippedRecord) => (skipped++, skippedSamples.length < 5 && skippedSamples.push(problem)),
  };
  if (source.dataset === "musique") yield* jsonLinesSteps(read, (value) => examples.push(parseMusiqueRecord(value)));
  else yield* jsonArraySteps(read, (value) => examples.push(parseWikiRecord(value)));
  if (examples.length === 0) {
    throw new DataError({
      code: "DATA_EMPTY",
      file: source.file,
      message: `no usable records${skipped ? ` (${skipped} malformed records skipped)` : ""}; point file or data_dir at the official dev file`,
    });
  }
  const aliases = source.aliasesFile ? yield* wikiAliasesSteps(source.aliasesFile, CONFIG_ALIASES_FIXES, preloaded.aliases) : new Map<string, Set<string>>();
  const first = skippedSamples[0];
  const notes =
    skipped > 0
      ? [`skipped ${skipped} malformed record(s) in ${source.file} (skip_bad)${first ? `; first at line ${first.line}: ${first.message.slice(0, 160)}` : ""}`]
      : [];
  return { source, examples, skipped, skippedSamples, aliases, hasUnanswerable: examples.some((example) => !example.answerable), notes };
}

/**
 * The dataset for a source, loaded once per process (module-level cache), so task generation is O(1)
 * after the first call. Library code writes nothing: records skipped in skip-bad mode are in `notes`,
 * which the environment's `notes` hook hands to the run (summary.json, the report, the eval command).
 */
export function getDataset(source: DataSource): MultihopDataset {
  const key = cacheKey(source);
  let dataset = cache.get(key);
  if (!dataset) {
    dataset = loadDataset(source);
    cache.set(key, dataset);
  }
  return dataset;
}

/** Reads a file without blocking the event loop; an unreadable one is reported as the synchronous reader does. */
async function readBytes(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    throw new DataError({
      code: "DATA_FILE_UNREADABLE",
      file,
      message: `cannot open (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); check the path or pass data_dir / file`,
      cause: error,
    });
  }
}

/** `getDataset` for a server: the files are read asynchronously, then parsed a chunk at a time between other work, and cached. */
export function prepareDataset(source: DataSource): Promise<void> {
  const key = cacheKey(source);
  if (cache.has(key)) return Promise.resolve();
  const failed = failures.get(key);
  if (failed) return Promise.reject(failed);
  // Loads of one source at once share one read (8 sessions naming one 200 MB file held 1.5 GB; issue 36).
  let loading = loads.get(key);
  if (!loading) {
    loading = (async () => {
      const file = await readBytes(source.file);
      const aliases = source.aliasesFile ? await readBytes(source.aliasesFile) : undefined;
      const dataset = await finishCooperatively(datasetSteps(source, { file, aliases }));
      if (!cache.has(key)) cache.set(key, dataset);
    })();
    loads.set(key, loading);
    // A failed load is remembered (until clearDatasetCache), so a client asking again is not a way to make the server read the file again.
    loading.then(
      () => loads.delete(key),
      (error: unknown) => {
        loads.delete(key);
        failures.set(key, error);
      },
    );
  }
  return loading;
}

/** The files a config names itself (none for the shipped samples): what a server checks before reading. */
export function namedDataFiles(source: DataSource, config: { file?: string; data_dir?: string; aliases_file?: string }): string[] {
  if (!config.file && !config.data_dir && !config.aliases_file) return [];
  return [source.file, ...(source.aliasesFile ? [source.aliasesFile] : [])];
}

/** Forgets cached datasets (tests, long-running servers after the files changed). */
export function clearDatasetCache(): void {
  cache.clear();
  failures.clear();
}
