import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runScoreCommand } from "../../cli/commands/score.ts";
import { ToolgymError } from "../../core/index.ts";
import { MULTIHOP_FIXTURES } from "./fixtures.ts";
import { pythonSplit } from "./normalize.ts";
import { formatOfficialOutput, metricValues, scoreMusiqueFiles, scoreWikiFiles } from "./score-files.ts";

const musiqueGold = join(MULTIHOP_FIXTURES, "musique_dev_sample.jsonl");
const wikiGold = join(MULTIHOP_FIXTURES, "2wiki_dev_sample.json");
const directory = mkdtempSync(join(tmpdir(), "toolgym-score-"));
const musiqueRecords = readFileSync(musiqueGold, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((line) => JSON.parse(line) as { id: string; answer: string; paragraphs: Array<{ idx: number; is_supporting: boolean }> });
const wikiRecords = JSON.parse(readFileSync(wikiGold, "utf8")) as Array<{ _id: string; answer: string; supporting_facts: unknown[]; evidences: unknown[] }>;

/** Official MuSiQue prediction lines: {id, predicted_answer, predicted_support_idxs, predicted_answerable}. */
function writeMusiquePredictions(name: string, predict: (record: (typeof musiqueRecords)[number]) => { answer: string; support: number[] }): string {
  const file = join(directory, name);
  writeFileSync(
    file,
    musiqueRecords
      .map((record) =>
        JSON.stringify({
          id: record.id,
          predicted_answer: predict(record).answer,
          predicted_support_idxs: predict(record).support,
          predicted_answerable: true,
        }),
      )
      .join("\n") + "\n",
  );
  return file;
}

/** Official 2Wiki prediction object: {answer: {id}, sp: {id}, evidence: {id}}. */
function writeWikiPredictions(name: string, predict: (record: (typeof wikiRecords)[number]) => { answer: string; sp: unknown; evidence: unknown }): string {
  const file = join(directory, name);
  const prediction = { answer: {} as Record<string, unknown>, sp: {} as Record<string, unknown>, evidence: {} as Record<string, unknown> };
  for (const record of wikiRecords) {
    const value = predict(record);
    prediction.answer[record._id] = value.answer;
    prediction.sp[record._id] = value.sp;
    prediction.evidence[record._id] = value.evidence;
  }
  writeFileSync(file, JSON.stringify(prediction));
  return file;
}

const firstToken = (answer: string) => pythonSplit(answer)[0] as string;

/** `toolgym score <dataset> --gold --pred [--json]`, with the output collected. */
function runCli(dataset: string, options: { gold: string; pred: string; json?: boolean }): { stdout: string; stderr: string } {
  const collected = { stdout: "", stderr: "" };
  runScoreCommand(dataset, options, { out: (text) => (collected.stdout += text), err: (text) => (collected.stderr += text) });
  return collected;
}

describe("toolgym score: official aggregate outputs on the shipped samples", () => {
  it("MuSiQue gold predictions: answer_f1 1.0, answer_em 1.0, support_f1 1.0, printed like evaluate_v1.0.py", () => {
    const file = writeMusiquePredictions("musique-gold.jsonl", (record) => ({
      answer: record.answer,
      support: record.paragraphs.filter((paragraph) => paragraph.is_supporting).map((paragraph) => paragraph.idx),
    }));
    const result = scoreMusiqueFiles({ goldFile: musiqueGold, predictionFile: file });
    assert.equal(result.n, 40);
    assert.equal(formatOfficialOutput(result), '{\n    "answer_f1": 1.0,\n    "answer_em": 1.0,\n    "support_f1": 1.0\n}');
    const cli = runCli("musique", { gold: musiqueGold, pred: file });
    assert.equal(cli.stderr, "");
    assert.equal(cli.stdout, `${formatOfficialOutput(result)}\n`);
  });

  it("MuSiQue first-token predictions: answer_f1 0.646, answer_em 0.2, support_f1 0.113", () => {
    const file = writeMusiquePredictions("musique-first.jsonl", (record) => ({ answer: firstToken(record.answer), support: [0, 1] }));
    const result = scoreMusiqueFiles({ goldFile: musiqueGold, predictionFile: file });
    assert.deepEqual(metricValues(result), { answer_f1: 0.646, answer_em: 0.2, support_f1: 0.113 });
    const cli = runCli("musique", { gold: musiqueGold, pred: file, json: true });
    assert.deepEqual(JSON.parse(cli.stdout), { dataset: "musique", n: 40, metrics: { answer_f1: 0.646, answer_em: 0.2, support_f1: 0.113 }, messages: [] });
  });

  it("2Wiki gold predictions: all 16 metrics 100.0", () => {
    const file = writeWikiPredictions("2wiki-gold.json", (record) => ({ answer: record.answer, sp: record.supporting_facts, evidence: record.evidences }));
    const emptyAliases = join(directory, "id_aliases.json");
    writeFileSync(emptyAliases, "");
    const result = scoreWikiFiles({ goldFile: wikiGold, predictionFile: file, aliasesFile: emptyAliases });
    assert.equal(Object.keys(result.metrics).length, 16);
    for (const [key, value] of Object.entries(metricValues(result))) assert.equal(value, 100, key);
    assert.match(formatOfficialOutput(result), /^\{\n {4}"em": 100\.0,\n/);
  });

  it("2Wiki first-token predictions with ircot's dummy sp/evidence: em 27.5, f1 63.88, prec 92.5, recall 53.36, the rest 0.0", () => {
    const file = writeWikiPredictions("2wiki-first.json", (record) => ({ answer: firstToken(record.answer), sp: [["", 0]], evidence: ["", "", ""] }));
    const expected: Record<string, number> = { em: 27.5, f1: 63.88, prec: 92.5, recall: 53.36 };
    const cli = runCli("2wiki", { gold: wikiGold, pred: file, json: true });
    assert.match(cli.stderr, /no id_aliases\.json/);
    const values = (JSON.parse(cli.stdout) as { metrics: Record<string, number> }).metrics;
    assert.equal(Object.keys(values).length, 16);
    for (const [key, value] of Object.entries(values)) assert.equal(value, expected[key] ?? 0, key);
  });

  it("scores a missing 2Wiki id as 0 over len(gold) and prints 'missing answer <id>' like the official script", () => {
    const file = join(directory, "2wiki-partial.json");
    const [first] = wikiRecords;
    writeFileSync(file, JSON.stringify({ answer: { [first?._id as string]: first?.answer }, sp: {}, evidence: {} }));
    const result = scoreWikiFiles({ goldFile: wikiGold, predictionFile: file });
    assert.equal(metricValues(result).em, 2.5);
    assert.equal(result.messages.length, 40 + 40 + 39);
    assert.ok(
      formatOfficialOutput(result).startsWith(`missing sp fact ${first?._id}\nmissing evidence ${first?._id}\nmissing answer ${wikiRecords[1]?._id}\n`),
    );
  });

  it("rejects a MuSiQue prediction file with the wrong line count, naming the file", () => {
    const file = join(directory, "musique-short.jsonl");
    writeFileSync(file, JSON.stringify({ id: musiqueRecords[0]?.id, predicted_answer: "x", predicted_support_idxs: [], predicted_answerable: true }) + "\n");
    assert.throws(
      () => scoreMusiqueFiles({ goldFile: musiqueGold, predictionFile: file }),
      (error: unknown) => ToolgymError.isInstance(error) && error.message.includes(file) && error.message.includes("1 predictions"),
    );
  });
});
