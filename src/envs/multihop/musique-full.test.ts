import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runScoreCommand } from "../../cli/commands/score.ts";
import { DataError } from "../../core/index.ts";
import { MULTIHOP_FIXTURES } from "./fixtures.ts";
import { PythonError, pythonEquals, pythonInt, pythonIterate, pythonTruthy } from "../../python-semantics/index.ts";
import { evaluateMusiqueFiles, formatOfficialOutput, metricValues, scoreMusiqueFiles } from "./score-files.ts";

/**
 * MuSiQue-Full: every case of test/fixtures/multihop/musique_full/expected.json, whose numbers, printed
 * text and error lines come from running the official evaluate_v1.0.py (see that folder's README).
 */
const FOLDER = join(MULTIHOP_FIXTURES, "musique_full");

interface QuestionExpectation {
  pred_answerable_in_file_order: unknown[];
  gold_answerable_in_file_order: unknown[];
  answer_em: number;
  answer_f1: number;
  support_em: number;
  support_f1: number;
  sufficiency_correct: boolean;
  group_answer_sufficiency_f1: number;
  group_support_sufficiency_f1: number;
}

interface ValidCase {
  stdout: string;
  metrics: Record<string, number>;
  unrounded_diagnostic?: Record<string, number>;
  per_question_from_official_metric_functions?: Record<string, QuestionExpectation>;
  files: { pred: string; gold: string };
  description: string;
}

interface InvalidCase {
  rc: number;
  stdout: string;
  error_last_line: string;
  files: { pred: string; gold: string };
}

const expected = JSON.parse(readFileSync(join(FOLDER, "expected.json"), "utf8")) as {
  variants: Record<string, ValidCase>;
  extras: Record<string, ValidCase>;
  invalid: Record<string, InvalidCase>;
};

const filesOf = (entry: { files: { pred: string; gold: string } }) => ({
  goldFile: join(FOLDER, entry.files.gold),
  predictionFile: join(FOLDER, entry.files.pred),
});

function runCli(files: { goldFile: string; predictionFile: string }, json = false): { stdout: string; stderr: string } {
  const collected = { stdout: "", stderr: "" };
  runScoreCommand(
    "musique",
    { gold: files.goldFile, pred: files.predictionFile, ...(json ? { json } : {}) },
    { out: (text) => (collected.stdout += text), err: (text) => (collected.stderr += text) },
  );
  return collected;
}

const validCases = [...Object.entries(expected.variants), ...Object.entries(expected.extras)];

describe("toolgym score musique: MuSiQue-Full as evaluate_v1.0.py prints it", () => {
  it("the fixture holds the 8 variants, 6 extra valid inputs and 7 invalid inputs", () => {
    assert.equal(Object.keys(expected.variants).length, 8);
    assert.equal(Object.keys(expected.extras).length, 6);
    assert.equal(Object.keys(expected.invalid).length, 7);
  });

  for (const [name, entry] of validCases) {
    it(`${name}: prints exactly the official stdout (${entry.description})`, () => {
      const files = filesOf(entry);
      const cli = runCli(files);
      assert.equal(cli.stdout, entry.stdout);
      assert.equal(cli.stderr, "");
      assert.deepEqual(metricValues(scoreMusiqueFiles(files)), entry.metrics);
      assert.deepEqual((JSON.parse(runCli(files, true).stdout) as { metrics: unknown }).metrics, entry.metrics);
      if (entry.unrounded_diagnostic) assert.deepEqual(evaluateMusiqueFiles(files).unrounded, entry.unrounded_diagnostic);
    });

    const perQuestion = entry.per_question_from_official_metric_functions;
    if (perQuestion) {
      it(`${name}: per-question scores equal the official metric functions'`, () => {
        const questions = evaluateMusiqueFiles(filesOf(entry)).questions;
        assert.deepEqual(
          questions.map((question) => question.id),
          Object.keys(perQuestion),
        );
        for (const question of questions) {
          const official = perQuestion[question.id] as QuestionExpectation;
          assert.deepEqual(
            {
              pred_answerable_in_file_order: question.predictedAnswerable,
              gold_answerable_in_file_order: question.goldAnswerable,
              answer_em: question.answerEm,
              answer_f1: question.answerF1,
              support_em: question.supportEm,
              support_f1: question.supportF1,
              sufficiency_correct: question.sufficiencyCorrect,
              group_answer_sufficiency_f1: question.groupAnswerSufficiencyF1,
              group_support_sufficiency_f1: question.groupSupportSufficiencyF1,
            },
            official,
            question.id,
          );
        }
      });
    }
  }

  it("answerable-only gold (MuSiQue-Ans) prints no group metrics; a Full gold prints both", () => {
    assert.deepEqual(Object.keys(scoreMusiqueFiles(filesOf(expected.extras.extra_answerable_only_mixed as ValidCase)).metrics), [
      "answer_f1",
      "answer_em",
      "support_f1",
    ]);
    const full = evaluateMusiqueFiles(filesOf(expected.variants.perfect as ValidCase));
    assert.equal(full.full, true);
    assert.equal(full.answerable, 20);
    assert.equal(formatOfficialOutput(scoreMusiqueFiles(filesOf(expected.variants.perfect as ValidCase))).split("\n").length, 7);
  });
});

const CODES: Record<string, string> = {
  invalid_pred_order_swapped_across_ids: "SCORE_ID_ORDER_MISMATCH",
  invalid_pred_missing_last_line: "SCORE_LINE_COUNT_MISMATCH",
  invalid_id_once: "SCORE_GROUP_NOT_PAIRED",
  invalid_id_three_times: "SCORE_GROUP_NOT_PAIRED",
  invalid_pair_without_answerable: "SCORE_GROUP_NO_ANSWERABLE",
  invalid_null_answer_on_answerable: "SCORE_FIELD_INVALID",
  invalid_missing_predicted_answerable: "SCORE_FIELD_MISSING",
};

describe("toolgym score musique: rejects what evaluate_v1.0.py rejects, in one line", () => {
  for (const [name, entry] of Object.entries(expected.invalid)) {
    it(`${name}: ${CODES[name]}, quoting '${entry.error_last_line}'`, () => {
      assert.equal(entry.rc, 1);
      assert.throws(
        () => runCli(filesOf(entry)),
        (error: unknown) => {
          assert.ok(error instanceof DataError);
          assert.equal(error.code, CODES[name]);
          assert.ok(!error.message.includes("\n"), error.message);
          assert.ok(error.message.endsWith(`(evaluate_v1.0.py fails with ${entry.error_last_line})`), error.message);
          // The file named is one of the two inputs.
          assert.ok(error.message.startsWith(filesOf(entry).predictionFile) || error.message.startsWith(filesOf(entry).goldFile), error.message);
          return true;
        },
      );
    });
  }

  it("the CLI prints one error line on stderr, nothing on stdout, and exits 1", () => {
    const entry = expected.invalid.invalid_missing_predicted_answerable as InvalidCase;
    const files = filesOf(entry);
    const binary = fileURLToPath(new URL("../../../bin/toolgym.js", import.meta.url));
    const result = spawnSync(process.execPath, [binary, "score", "musique", "--gold", files.goldFile, "--pred", files.predictionFile], { encoding: "utf8" });
    assert.equal(result.status, 1, result.stderr);
    assert.equal(result.stdout, "");
    const lines = result.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0] as string, /SCORE_FIELD_MISSING|missing 'predicted_answerable'/);
    assert.match(lines[0] as string, /KeyError: 'predicted_answerable'/);
  });
});

describe("Python value semantics the scorer relies on (values checked against CPython 3)", () => {
  it("int(): numbers truncate, bools are 0/1, strings strip Unicode whitespace and accept signs, underscores and any Nd digit", () => {
    const cases: Array<[unknown, number]> = [
      ["3", 3],
      [" 3 ", 3],
      ["+3", 3],
      ["-0", 0],
      ["1_0", 10],
      ["\u0663", 3],
      ["\u{1D7D7}", 9],
      ["\u00a03\u2003", 3],
      [true, 1],
      [3.7, 3],
      [-3.7, -3],
    ];
    for (const [input, output] of cases) assert.equal(pythonInt(input), output, JSON.stringify(input));
    for (const input of ["0x10", "3.5", "", "_1", "1__0", "1_", "- 3"]) {
      assert.throws(
        () => pythonInt(input),
        (error: unknown) => error instanceof PythonError && error.official.startsWith("ValueError: invalid literal for int() with base 10: "),
        input,
      );
    }
    assert.throws(() => pythonInt(null), { official: "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'" });
    assert.throws(() => pythonInt([1]), { official: "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'list'" });
  });

  it("iteration, ==, truthiness", () => {
    assert.deepEqual(pythonIterate("12").map(pythonInt), [1, 2]);
    assert.deepEqual(pythonIterate({ 3: 1 }).map(pythonInt), [3]);
    assert.throws(() => pythonIterate(5), { official: "TypeError: 'int' object is not iterable" });
    assert.equal(pythonEquals([true, false], [1, 0]), true);
    assert.equal(pythonEquals([1, 0], [1.0, 0.0]), true);
    assert.equal(pythonEquals(["1"], [1]), false);
    assert.equal(pythonEquals(null, null), true);
    assert.equal(pythonEquals({ a: [1] }, { a: [true] }), true);
    assert.equal(pythonEquals(null, false), false);
    for (const value of [false, 0, "", null, [], {}]) assert.equal(pythonTruthy(value), false, JSON.stringify(value));
    for (const value of [true, 2, "x", [0], { a: 0 }]) assert.equal(pythonTruthy(value), true, JSON.stringify(value));
  });
});
