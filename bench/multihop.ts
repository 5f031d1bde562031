/**
 * MuSiQue / 2WikiMultihopQA data path on one core: loading + indexing 12,576 synthetic 2Wiki-sized dev
 * records (the official dev size), and scoring 12,576 predictions with the official metrics.
 *
 *   npx tsx bench/multihop.ts [--records 12576]
 *
 * Synthetic records have the real `data_ids` schema and size: 10 paragraphs of 2–6 sentences of 12–26
 * words (≈ 4.8 KB per record, like the shipped sample), drawn from a 6,000-word vocabulary. Target: each
 * of "load + index" and "score predictions" under 2 s.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRandom, type Random } from "../src/core/index.ts";
import { wikiAnswerScores } from "../src/envs/multihop/2wiki-metric.ts";
import { loadDataset } from "../src/envs/multihop/dataset.ts";
import { exampleCorpus, poolCorpus } from "../src/envs/multihop/retrieval.ts";
import { scoreWikiFiles } from "../src/envs/multihop/score-files.ts";

const argumentIndex = process.argv.indexOf("--records");
const count = argumentIndex > 0 ? Number(process.argv[argumentIndex + 1]) : 12_576;
const random = createRandom("bench", "multihop");
const syllables = ["ka", "lo", "mi", "ru", "te", "vo", "za", "ne", "pi", "shu", "an", "bel", "cor", "dan", "el", "fir", "gar", "hol", "is", "jun"];
const common = "the of and in a to was is for on by with as at from his he that it an which film born director also married".split(" ");
const vocabulary = Array.from({ length: 6000 }, (_, index) => {
  const word = createRandom("word", index);
  return Array.from({ length: word.integer(2, 4) }, () => word.pick(syllables)).join("");
});
const capital = (word: string) => word[0]?.toUpperCase() + word.slice(1);

function sentence(rng: Random): string {
  const words = Array.from({ length: rng.integer(12, 26) }, () => (rng.chance(0.4) ? rng.pick(common) : rng.pick(vocabulary)));
  return `${capital(words.join(" "))}.`;
}

function title(rng: Random): string {
  return Array.from({ length: rng.integer(1, 3) }, () => capital(rng.pick(vocabulary))).join(" ");
}

function record(index: number): Record<string, unknown> {
  const rng = random.fork(index);
  const context = Array.from({ length: 10 }, () => [title(rng), Array.from({ length: rng.integer(2, 6) }, () => sentence(rng))] as [string, string[]]);
  const answer = title(rng);
  return {
    _id: `${index.toString(16).padStart(8, "0")}0bb011ebab90acde48001122`,
    type: rng.pick(["comparison", "inference", "compositional", "bridge_comparison"]),
    question: `Who is the ${rng.pick(vocabulary)} of the director of film ${context[0]?.[0]}?`,
    context,
    entity_ids: `Q${index}_Q${index + 1}`,
    supporting_facts: [[context[0]?.[0], 0], [context[3]?.[0], 1]],
    evidences: [[context[0]?.[0], "director", context[3]?.[0]], [context[3]?.[0], "father", answer]],
    answer,
    evidences_id: [],
    answer_id: `Q${index + 7}`,
  };
}

function time<T>(body: () => T): { value: T; seconds: number } {
  const start = performance.now();
  const value = body();
  return { value, seconds: (performance.now() - start) / 1000 };
}

const directory = mkdtempSync(join(tmpdir(), "toolgym-bench-multihop-"));
try {
  const records = Array.from({ length: count }, (_, index) => record(index));
  const goldFile = join(directory, "dev.json");
  writeFileSync(goldFile, JSON.stringify(records));
  const predictionFile = join(directory, "pred.json");
  const prediction = { answer: {} as Record<string, string>, sp: {} as Record<string, unknown>, evidence: {} as Record<string, unknown> };
  records.forEach((item, index) => {
    const answer = item.answer as string;
    prediction.answer[item._id as string] = index % 3 === 0 ? answer : index % 3 === 1 ? `the ${answer.split(" ")[0]} ${vocabulary[index % 6000]}` : "yes";
    prediction.sp[item._id as string] = item.supporting_facts;
    prediction.evidence[item._id as string] = item.evidences;
  });
  writeFileSync(predictionFile, JSON.stringify(prediction));
  const megabytes = statSync(goldFile).size / 1e6;

  const load = time(() => loadDataset({ dataset: "2wiki", file: goldFile, skipBad: false }));
  const perExample = time(() => load.value.examples.reduce((sum, example) => sum + exampleCorpus(example).documents.length, 0));
  const pool = time(() => poolCorpus(load.value).documents.length);
  const golds = records.map((item) => [item.answer as string]);
  const answers = records.map((item) => prediction.answer[item._id as string] as string);
  const metric = time(() => answers.reduce((sum, answer, index) => sum + wikiAnswerScores(answer, golds[index] as string[]).f1, 0));
  const scored = time(() => scoreWikiFiles({ goldFile, predictionFile }));

  const rows: Array<[string, number, string]> = [
    [`load ${count} records (${megabytes.toFixed(1)} MB, stream-parse + validate)`, load.seconds, `${load.value.examples.length} examples`],
    [`index: per-example BM25 (search mode), ${perExample.value} paragraphs`, perExample.seconds, "all examples"],
    [`load + per-example index`, load.seconds + perExample.seconds, load.seconds + perExample.seconds < 2 ? "PASS (< 2 s)" : "FAIL (≥ 2 s)"],
    [`index: pool BM25 (pool mode), ${pool.value} distinct paragraphs`, pool.seconds, "built once per file"],
    [`score ${count} answers (official 2Wiki EM/F1 only)`, metric.seconds, `mean f1 ${(metric.value / count).toFixed(3)}`],
    [`toolgym score 2wiki: ${count} predictions, all 16 metrics incl. file reading`, scored.seconds, scored.seconds < 2 ? "PASS (< 2 s)" : "FAIL (≥ 2 s)"],
  ];
  const width = Math.max(...rows.map((row) => row[0].length));
  process.stdout.write(`${"step".padEnd(width)}  seconds  note\n${"-".repeat(width)}  -------  ----\n`);
  for (const [label, seconds, note] of rows) process.stdout.write(`${label.padEnd(width)}  ${seconds.toFixed(3).padStart(7)}  ${note}\n`);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
