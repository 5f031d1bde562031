import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DataError, ToolgymError } from "../../core/index.ts";
import { loadDataset, resolveDataSource, DATASET_FILES } from "./dataset.ts";
import { MULTIHOP_FIXTURES } from "./fixtures.ts";
import { readJsonArray } from "./read-records.ts";

const directory = mkdtempSync(join(tmpdir(), "toolgym-multihop-load-"));
const musiqueLines = readFileSync(join(MULTIHOP_FIXTURES, "musique_dev_sample.jsonl"), "utf8").split("\n").filter(Boolean);
const wikiText = readFileSync(join(MULTIHOP_FIXTURES, "2wiki_dev_sample.json"), "utf8");

function isOneLineDataError(file: string, line: number) {
  return (error: unknown) => {
    assert.ok(ToolgymError.isInstance(error) && error instanceof DataError, String(error));
    assert.equal(error.line, line);
    assert.ok(error.message.startsWith(`${file}:${line}: `), error.message);
    assert.ok(!error.message.includes("\n"), "the message is one line");
    return true;
  };
}

describe("multihop loaders", () => {
  it("loads the official samples: 40 MuSiQue-Ans and 40 2Wiki records", () => {
    const musique = loadDataset(resolveDataSource("musique", {}));
    assert.equal(musique.examples.length, 40);
    assert.equal(musique.examples[0]?.id, "2hop__574419_270105");
    assert.equal(musique.examples[0]?.paragraphs.length, 20);
    const wiki = loadDataset(resolveDataSource("2wiki", {}));
    assert.equal(wiki.examples.length, 40);
    assert.equal(wiki.examples[0]?.paragraphs.length, 10);
    assert.ok(wiki.examples.every((example) => example.paragraphs.some((paragraph) => paragraph.supporting)));
  });

  it("fails on a malformed MuSiQue line with a one-line error naming the file and line", () => {
    const file = join(directory, "bad.jsonl");
    const lines = [...musiqueLines];
    lines[6] = lines[6]?.slice(0, 200) as string;
    lines[11] = JSON.stringify({ ...JSON.parse(lines[11] as string), question: 7 });
    writeFileSync(file, `${lines.join("\n")}\n`);
    assert.throws(() => loadDataset({ dataset: "musique", file, skipBad: false }), isOneLineDataError(file, 7));
  });

  it("skip-bad continues past malformed lines and reports how many it skipped", () => {
    const file = join(directory, "bad-skip.jsonl");
    const lines = [...musiqueLines];
    lines[6] = "{not json";
    lines[11] = JSON.stringify({ ...JSON.parse(lines[11] as string), question: 7 });
    writeFileSync(file, `${lines.join("\n")}\n\n`);
    const dataset = loadDataset({ dataset: "musique", file, skipBad: true });
    assert.equal(dataset.examples.length, 38);
    assert.equal(dataset.skipped, 2);
    assert.deepEqual(
      dataset.skippedSamples.map((problem) => problem.line),
      [7, 12],
    );
    assert.match(dataset.skippedSamples[1]?.message as string, /'question' must be a string/);
  });

  it("reports a malformed 2Wiki record by line and column inside the one-line array, and skips it in skip-bad mode", () => {
    const records = JSON.parse(wikiText) as Array<Record<string, unknown>>;
    const file = join(directory, "dev.json");
    const broken = records.map((record) => JSON.stringify(record));
    broken[3] = broken[3]?.replace('"question":', '"question" ') as string;
    writeFileSync(file, `[${broken.join(", ")}]`);
    const column = 2 + broken.slice(0, 3).reduce((sum, text) => sum + text.length + 2, 0);
    assert.throws(
      () => loadDataset({ dataset: "2wiki", file, skipBad: false }),
      (error: unknown) => isOneLineDataError(file, 1)(error) && (error as Error).message.includes(`record #4, column ${column}`),
    );
    const dataset = loadDataset({ dataset: "2wiki", file, skipBad: true });
    assert.equal(dataset.examples.length, 39);
    assert.equal(dataset.skipped, 1);
  });

  it("reads an indented multi-line array and reports the record's own line", () => {
    const records = (JSON.parse(wikiText) as Array<Record<string, unknown>>).slice(0, 3);
    const file = join(directory, "indented.json");
    writeFileSync(file, JSON.stringify([records[0], { ...records[1], context: "oops" }, records[2]], null, 4));
    const line = JSON.stringify([records[0]], null, 4).split("\n").length;
    assert.throws(() => loadDataset({ dataset: "2wiki", file, skipBad: false }), isOneLineDataError(file, line));
    const seen: unknown[] = [];
    readJsonArray({ file: join(directory, "indented.json") }, (value) => seen.push(value));
    assert.equal(seen.length, 3);
  });

  it("cuts records correctly when escapes and quotes straddle the 1 MiB read boundary", () => {
    const records = [{ a: 'q"uo\\\\"te\\' }, { b: `${"x".repeat((1 << 20) - 30)}\\"\\\\` }, { c: "[{,]}" }, { d: "\\" }, [1, [2, "]"]]];
    const file = join(directory, "straddle.json");
    for (let shift = 0; shift < 12; shift++) {
      writeFileSync(file, " ".repeat(shift) + JSON.stringify(records, null, shift % 3));
      const seen: unknown[] = [];
      readJsonArray({ file }, (value) => seen.push(value));
      assert.deepEqual(seen, records, `shift ${shift}`);
    }
  });

  it("decodes multi-byte UTF-8 characters cut by the 1 MiB read boundary, and drops a byte-order mark", () => {
    const file = join(directory, "utf8-straddle.json");
    for (const character of ["é", "–", "😀"]) {
      for (let shift = 0; shift < 4; shift++) {
        const records = [{ text: `${"x".repeat((1 << 20) - 16 + shift)}${character.repeat(8)}` }, { text: `Σ${character}` }];
        writeFileSync(file, `\ufeff${JSON.stringify(records)}`);
        const seen: unknown[] = [];
        readJsonArray({ file }, (value) => seen.push(value));
        assert.deepEqual(seen, records, `${character} shift ${shift}`);
      }
    }
  });

  it("refuses a truncated array even in skip-bad mode", () => {
    const file = join(directory, "truncated.json");
    writeFileSync(file, wikiText.slice(0, 5000));
    assert.throws(() => loadDataset({ dataset: "2wiki", file, skipBad: true }), /ends inside the array/);
  });

  it("resolves data_dir to the official file names and picks up id_aliases.json", () => {
    copyFileSync(join(MULTIHOP_FIXTURES, "musique_dev_sample.jsonl"), join(directory, DATASET_FILES.musique.official));
    writeFileSync(join(directory, "id_aliases.json"), `${JSON.stringify({ Q_id: "Q38685497", aliases: ["Free Guy (film)"], demonyms: [] })}\n`);
    const musique = resolveDataSource("musique", { data_dir: directory });
    assert.equal(musique.file, join(directory, "musique_ans_v1.0_dev.jsonl"));
    const wiki = resolveDataSource("2wiki", { data_dir: directory });
    assert.equal(wiki.file, join(directory, "dev.json"));
    assert.equal(wiki.aliasesFile, join(directory, "id_aliases.json"));
    assert.equal(
      loadDataset({ ...wiki, file: join(MULTIHOP_FIXTURES, "2wiki_dev_sample.json") })
        .aliases.get("Q38685497")
        ?.has("Free Guy (film)"),
      true,
    );
  });

  it("loads unanswerable MuSiQue-Full records and marks the dataset as Full", () => {
    const file = join(directory, "full.jsonl");
    writeFileSync(file, `${musiqueLines[0]}\n${JSON.stringify({ ...JSON.parse(musiqueLines[1] as string), answerable: false })}\n`);
    const dataset = loadDataset({ dataset: "musique", file, skipBad: false });
    assert.deepEqual(
      dataset.examples.map((example) => example.answerable),
      [true, false],
    );
    assert.equal(dataset.hasUnanswerable, true);
    assert.equal(loadDataset(resolveDataSource("musique", {})).hasUnanswerable, false);
  });

  it("a non-boolean 'answerable' is a malformed record", () => {
    const file = join(directory, "bad-answerable.jsonl");
    writeFileSync(file, `${JSON.stringify({ ...JSON.parse(musiqueLines[0] as string), answerable: "no" })}\n`);
    assert.throws(() => loadDataset({ dataset: "musique", file, skipBad: false }), /:1: .*'answerable' must be true or false/);
  });
});
