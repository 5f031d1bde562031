import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { builtinSuite, builtinSuiteNames } from "../src/eval/suites/builtin.ts";
import { resolveSuite } from "../src/eval/suites/command.ts";
import { parseModelTarget, type SuiteManifest } from "../src/eval/suites/run-suite.ts";
import { runCli } from "./report-support.ts";

/** The seed card's rows, in its order. */
const SEED_BENCHMARKS = ["musique", "2wiki", "search_plan_ood", "babyai"];

/**
 * The quick card's value rows with the scripted oracles: they solve every multihop and search_plan_ood task
 * (1.000), and BabyAI's return is 1 − 0.9·steps/max_steps over the 5 tasks' oracle episodes.
 */
const QUICK_CARD_ROWS = [
  "| MuSiQue (search) | EM | 8 | 1.000 [1.000, 1.000] (n=8) |",
  "| MuSiQue (search) | F1 | 8 | 1.000 [1.000, 1.000] (n=8)",
  "| 2WikiMultihopQA (search) | EM | 8 | 1.000 [1.000, 1.000] (n=8) |",
  "| 2WikiMultihopQA (search) | F1 | 8 | 1.000 [1.000, 1.000] (n=8) |",
  "| search_plan_ood | mean reward | 10 | 1.000 [1.000, 1.000] (n=10) |",
  "| BALROG BabyAI | mean episode return | 5 | 0.927 [0.886, 0.959] (n=5)",
];

describe("suites: quick with the scripted agents, then the card", () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), "toolgym-suite-"));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("seed-card has the seed's rows and n; quick the same rows; one suite per environment", () => {
    const seed = builtinSuite("seed-card", { dataDir: "/data" })!;
    assert.deepEqual(
      seed.rows.map((row) => [row.benchmark, row.env, row.n, row.metrics.join("/")]),
      [
        ["musique", "musique", 2417, "em/f1"],
        ["2wiki", "2wiki", 12576, "em/f1"],
        ["search_plan_ood", "search_plan_ood", 100, "reward"],
        ["babyai", "babyai", 50, "return"],
      ],
    );
    assert.equal(seed.rows[0]!.config.data_dir, "/data");
    assert.deepEqual(
      builtinSuite("quick")!.rows.map((row) => row.benchmark),
      [...SEED_BENCHMARKS],
    );
    assert.deepEqual(builtinSuiteNames(), [
      "seed-card",
      "quick",
      "mock",
      "search_plan_act",
      "search_plan_ood",
      "babyai",
      "musique",
      "2wiki",
      "tau2_retail",
      "tau2_mock",
      "tau2_telecom",
    ]);
    assert.deepEqual(
      builtinSuite("babyai")!.rows.map((row) => [row.benchmark, row.env, row.n, row.metrics.join("/")]),
      [["babyai", "babyai", 100, "return"]],
    );
    assert.deepEqual(
      builtinSuite("2wiki")!.rows.map((row) => [row.benchmark, row.env, row.n, row.metrics.join("/")]),
      [["2wiki", "2wiki", 100, "em/f1"]],
    );
    assert.deepEqual(parseModelTarget("base=http://a:1/v1,http://b:1/v1#Qwen/Qwen3-4B"), {
      label: "base",
      baseUrls: ["http://a:1/v1", "http://b:1/v1"],
      name: "Qwen/Qwen3-4B",
    });
    assert.throws(() => parseModelTarget("Qwen/Qwen3-4B"), /LABEL=URL#MODEL/);
  });

  it("user suites load from JSON and YAML; bad ones name the field", () => {
    const yamlFile = join(root, "mine.yaml");
    writeFileSync(yamlFile, "name: mine\nrows:\n  - benchmark: lookup\n    env: mock\n    n: 3\n  - benchmark: future\n    env: not_built_yet\n    n: 2\n");
    const suite = resolveSuite(yamlFile);
    assert.deepEqual(
      suite.rows.map((row) => [row.benchmark, row.seed, row.metrics]),
      [
        ["lookup", 0, ["reward"]],
        ["future", 0, ["reward"]],
      ],
    );
    const jsonFile = join(root, "bad.json");
    writeFileSync(jsonFile, JSON.stringify({ name: "bad", rows: [{ benchmark: "x", env: "mock", n: -1 }] }));
    assert.throws(() => resolveSuite(jsonFile), /bad\.json: field 'rows\.0\.n'/);
    assert.throws(() => resolveSuite("no-such-suite"), /unknown suite 'no-such-suite'; built in: seed-card, quick/);
  });

  it("a row whose environment is not registered stays in the report and says so", async () => {
    const yamlFile = join(root, "future.yaml");
    // `planned: true`: an environment not built yet, on purpose (an unknown env without it is a typo, exit 2).
    writeFileSync(
      yamlFile,
      "name: future\nrows:\n  - benchmark: lookup\n    env: mock\n    n: 3\n  - benchmark: future\n    env: not_built_yet\n    planned: true\n    n: 2\n",
    );
    const out = join(root, "future");
    assert.equal((await runCli(["eval", "--suite", yamlFile, "--out", out, "--quiet"])).code, 0);
    const reported = await runCli(["report", out]);
    assert.equal(reported.code, 0, reported.stderr);
    assert.match(reported.stdout, /^\| lookup \| mean reward \| 1\.000 \[1\.000, 1\.000\] \(n=3\) \|$/m);
    assert.match(reported.stdout, /^\| future \| mean reward \| \*\*environment not available\*\* \|$/m);
    assert.match(reported.stdout, /future mean reward\*\*: not evaluated: environment not available \(environment 'not_built_yet' is not registered/);
  });

  it("`toolgym eval --suite quick` then `toolgym report … --card` has a row for every seed benchmark", async () => {
    const out = join(root, "quick");
    const evaluated = await runCli(["eval", "--suite", "quick", "--out", out, "--quiet"]);
    assert.equal(evaluated.code, 0, evaluated.stderr);
    const manifest = JSON.parse(readFileSync(join(out, "suite.json"), "utf8")) as SuiteManifest;
    assert.deepEqual(
      manifest.rows.map((row) => row.benchmark),
      [...SEED_BENCHMARKS],
    );
    assert.deepEqual(
      manifest.rows.map((row) => [row.benchmark, row.status, row.runs.length]),
      [
        ["musique", "ran", 1],
        ["2wiki", "ran", 1],
        ["search_plan_ood", "ran", 1],
        ["babyai", "ran", 1],
      ],
    );
    const cardFile = join(out, "README.md");
    const reported = await runCli(["report", out, "--card", "--out", cardFile]);
    assert.equal(reported.code, 0, reported.stderr);
    const card = readFileSync(cardFile, "utf8");
    const lines = card.split("\n");
    for (const row of QUICK_CARD_ROWS)
      assert.ok(
        lines.some((line) => line.startsWith(row)),
        `the card has the row ${row}`,
      );
    assert.match(card, /## Generation settings and per-benchmark n/);
    // The commands that remake this card: the suite into the folder the report read, then the report.
    assert.ok(card.includes(`npx toolgym eval --suite quick --out ${out}\n`), card);
    assert.ok(card.includes(`npx toolgym report ${out} --card --out card.md\n`), card);
  });
});
