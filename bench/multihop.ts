/**
 * MuSiQue / 2WikiMultihopQA data path on one core: loading + indexing 12,576 synthetic 2Wiki-sized dev
 * records (the official dev size), and scoring 12,576 predictions with the official metrics.
 *
 *   npx tsx bench/multihop.ts [--records 12576] [--node-flags "--single-threaded-gc"] [--keep DIR]
 *
 * Synthetic records have the real `data_ids` schema and size: 10 paragraphs of 2–6 sentences of 12–26
 * words (≈ 5 KB per record; the shipped sample averages 4.8 KB), drawn from a 6,000-word vocabulary.
 * Each step runs in its own Node process, as `toolgym eval` / `toolgym score` would, after one warm-up
 * load. Target: "load + index" and "score predictions" each under 2 s. The verdict is on CPU time
 * (user + system of the whole process, so it includes V8's GC and compiler helper threads: at least
 * what one core would spend); wall time is shown beside it. `--keep DIR` writes the generated files to
 * DIR and keeps them, for profiling one step:
 *
 *   node --cpu-prof --import tsx bench/multihop.ts --step load --dir DIR
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRandom, type Random } from "../src/core/index.ts";
import { wikiAnswerScores } from "../src/envs/multihop/2wiki-metric.ts";
import { loadDataset } from "../src/envs/multihop/dataset.ts";
import { exampleCorpus, poolCorpus } from "../src/envs/multihop/retrieval.ts";
import { scoreWikiFiles } from "../src/envs/multihop/score-files.ts";

const argument = (name: string) => {
  const position = process.argv.indexOf(name);
  return position > 0 ? process.argv[position + 1] : undefined;
};
const count = Number(argument("--records") ?? 12_576);

const syllables = ["ka", "lo", "mi", "ru", "te", "vo", "za", "ne", "pi", "shu", "an", "bel", "cor", "dan", "el", "fir", "gar", "hol", "is", "jun"];
const common = "the of and in a to was is for on by with as at from his he that it an which film born director also married".split(" ");
const vocabulary = Array.from({ length: 6000 }, (_, index) => {
  const word = createRandom("word", index);
  return Array.from({ length: word.integer(2, 4) }, () => word.pick(syllables)).join("");
});
const capital = (word: string) => word[0]?.toUpperCase() + word.slice(1);
const sentence = (rng: Random) =>
  `${capital(Array.from({ length: rng.integer(12, 26) }, () => (rng.chance(0.4) ? rng.pick(common) : rng.pick(vocabulary))).join(" "))}.`;
const title = (rng: Random) => Array.from({ length: rng.integer(1, 3) }, () => capital(rng.pick(vocabulary))).join(" ");

function record(index: number): Record<string, unknown> {
  const rng = createRandom("bench", "multihop", index);
  const context = Array.from({ length: 10 }, () => [title(rng), Array.from({ length: rng.integer(2, 6) }, () => sentence(rng))] as [string, string[]]);
  const answer = title(rng);
  return {
    _id: `${index.toString(16).padStart(8, "0")}0bb011ebab90acde48001122`,
    type: rng.pick(["comparison", "inference", "compositional", "bridge_comparison"]),
    question: `Who is the ${rng.pick(vocabulary)} of the director of film ${context[0]?.[0]}?`,
    context,
    entity_ids: `Q${index}_Q${index + 1}`,
    supporting_facts: [
      [context[0]?.[0], 0],
      [context[3]?.[0], 1],
    ],
    evidences: [
      [context[0]?.[0], "director", context[3]?.[0]],
      [context[3]?.[0], "father", answer],
    ],
    answer,
    evidences_id: [],
    answer_id: `Q${index + 7}`,
  };
}

/** Wall-clock and CPU seconds (user + system of this process: the one-core cost, robust to a loaded machine). */
function seconds(body: () => unknown): { wall: number; cpu: number } {
  const cpu = process.cpuUsage();
  const start = performance.now();
  body();
  const used = process.cpuUsage(cpu);
  return { wall: (performance.now() - start) / 1000, cpu: (used.user + used.system) / 1e6 };
}

type Timing = { wall: number; cpu: number };
const add = (first: Timing, second: Timing): Timing => ({ wall: first.wall + second.wall, cpu: first.cpu + second.cpu });

/** One measured step, in this (child) process; prints {label: seconds} as JSON. */
function runStep(step: string, directory: string): void {
  const goldFile = join(directory, "dev.json");
  const predictionFile = join(directory, "pred.json");
  const result: Record<string, Timing> = {};
  if (step === "load") {
    let dataset = loadDataset({ dataset: "2wiki", file: goldFile, skipBad: false });
    result.load = seconds(() => (dataset = loadDataset({ dataset: "2wiki", file: goldFile, skipBad: false })));
    result.per_example_index = seconds(() => dataset.examples.forEach((example) => exampleCorpus(example)));
    result.pool_index = seconds(() => poolCorpus(dataset));
  } else {
    const prediction = JSON.parse(readFileSync(predictionFile, "utf8")) as { answer: Record<string, string> };
    const golds = loadDataset({ dataset: "2wiki", file: goldFile, skipBad: false }).examples.map((example) => [example.id, example.answer] as const);
    result.answers_only = seconds(() => golds.forEach(([id, answer]) => wikiAnswerScores(prediction.answer[id] as string, [answer])));
    result.score_file = seconds(() => scoreWikiFiles({ goldFile, predictionFile }));
  }
  process.stdout.write(JSON.stringify(result));
}

const nodeFlags = (argument("--node-flags") ?? "").split(" ").filter(Boolean);

function child(step: string, directory: string): Record<string, Timing> {
  const self = fileURLToPath(import.meta.url);
  return JSON.parse(
    execFileSync(process.execPath, [...nodeFlags, "--import", "tsx", self, "--step", step, "--dir", directory], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }),
  ) as Record<string, Timing>;
}

const step = argument("--step");
if (step) {
  runStep(step, argument("--dir") as string);
} else {
  const keep = argument("--keep");
  if (keep) mkdirSync(keep, { recursive: true });
  const directory = keep ?? mkdtempSync(join(tmpdir(), "toolgym-bench-multihop-"));
  try {
    const records = Array.from({ length: count }, (_, index) => record(index));
    writeFileSync(join(directory, "dev.json"), JSON.stringify(records));
    const prediction = { answer: {} as Record<string, string>, sp: {} as Record<string, unknown>, evidence: {} as Record<string, unknown> };
    records.forEach((item, index) => {
      const answer = item.answer as string;
      prediction.answer[item._id as string] = index % 3 === 0 ? answer : index % 3 === 1 ? `the ${answer.split(" ")[0]} ${vocabulary[index % 6000]}` : "yes";
      prediction.sp[item._id as string] = item.supporting_facts;
      prediction.evidence[item._id as string] = item.evidences;
    });
    writeFileSync(join(directory, "pred.json"), JSON.stringify(prediction));
    const megabytes = statSync(join(directory, "dev.json")).size / 1e6;
    const load = child("load", directory);
    const score = child("score", directory);
    const loadAndIndex = add(load.load as Timing, load.per_example_index as Timing);
    const verdict = (value: Timing) => (value.cpu < 2 ? "PASS (< 2 s)" : "FAIL (≥ 2 s)");
    const loadAndPool = add(load.load as Timing, load.pool_index as Timing);
    const rows: Array<[string, Timing, string]> = [
      [`load ${count} records (${megabytes.toFixed(1)} MB dev.json: stream-parse + validate)`, load.load as Timing, ""],
      [`index: BM25 over each example's 10 paragraphs (search mode), all ${count}`, load.per_example_index as Timing, ""],
      [`load + index (search mode)`, loadAndIndex, verdict(loadAndIndex)],
      [`index: pool BM25 over all ${count * 10} paragraphs (pool mode, once per file)`, load.pool_index as Timing, ""],
      [`load + pool index (pool mode)`, loadAndPool, verdict(loadAndPool)],
      [`score ${count} answers (official 2Wiki EM/F1 per example)`, score.answers_only as Timing, ""],
      [`toolgym score 2wiki: ${count} predictions, 16 metrics, files read`, score.score_file as Timing, verdict(score.score_file as Timing)],
    ];
    const width = Math.max(...rows.map((row) => row[0].length));
    const flags = nodeFlags.length > 0 ? ` (node ${nodeFlags.join(" ")})` : "";
    process.stdout.write(`multihop data path, one process per step${flags}; verdict on CPU seconds (target < 2 s)\n\n`);
    process.stdout.write(`${"step".padEnd(width)}  cpu s  wall s  verdict\n${"-".repeat(width)}  -----  ------  ------------\n`);
    for (const [label, value, note] of rows)
      process.stdout.write(`${label.padEnd(width)}  ${value.cpu.toFixed(3).padStart(5)}  ${value.wall.toFixed(3).padStart(6)}  ${note}\n`);
  } finally {
    if (!keep) rmSync(directory, { recursive: true, force: true });
  }
}
