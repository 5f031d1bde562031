// Issue 37, item 14: the smaller careless-user cases. `--out -` is standard output wherever the output is one
// text; counts are decimal integers (0x10 and 1e2 are typos, not 16 and 100); `--top-k 0` is no valid k; a
// byte order mark does not cost a Tau2 file its first line. The CLI runs in-process (test/support/run-cli.ts).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { prepareTau2Sft } from "../src/data/sft/pipeline.ts";
import { generateTau2Lines } from "../src/data/synth/generate.ts";
import { qwen3TokenizerDir } from "./support/qwen3.ts";
import { runCli } from "./support/run-cli.ts";

const work = mkdtempSync(join(tmpdir(), "toolgym-honest-inputs-"));
const at = (name: string) => join(work, name);
after(() => rmSync(work, { recursive: true, force: true }));

/** One coded line on stderr, nothing on stdout, with the exit code. */
function assertRefused(result: { code: number; stdout: string; stderr: string }, exit: number, code: string, says?: RegExp): void {
  assert.equal(result.code, exit, result.stderr);
  assert.equal(result.stdout, "");
  const lines = result.stderr.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0] as string, new RegExp(`^toolgym: \\S.* \\[${code}\\]$`));
  if (says) assert.match(lines[0] as string, says);
}

describe("--out - is standard output for view, report and export, and never a file named '-'", () => {
  const run = at("runs/musique--scripted-oracle/r1");
  before(async () => {
    const made = await runCli(["eval", "--env", "musique", "--n", "3", "--quiet", "--out", at("runs"), "--run-id", "r1"]);
    assert.equal(made.code, 0, made.stderr);
  });

  it("report --out - prints the report; export --out - prints the export", async () => {
    const report = await runCli(["report", run, "--format", "json", "--out", "-"]);
    assert.equal(report.code, 0, report.stderr);
    const parsed = JSON.parse(report.stdout) as { runs: unknown[] };
    assert.equal(parsed.runs.length, 1);
    const exported = await runCli(["export", run, "--format", "musique", "--out", "-"]);
    assert.equal(exported.code, 0, exported.stderr);
    const predictions = exported.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: string });
    assert.equal(predictions.length, 3, "one prediction line per episode");
    assert.match(exported.stderr, /exported 3 episodes of .* to standard output/);
    assert.equal(existsSync("-"), false, "no file named '-' in the working directory");
  });

  it("commands that write a file refuse '-' (exit 2) instead of creating a file named '-'", async () => {
    assertRefused(
      await runCli(["dataset", "mock", "--n", "2", "--out", "-"]),
      2,
      "OUT_STDOUT_UNSUPPORTED",
      /--out - \(standard output\) is for view, report and export/,
    );
    assertRefused(await runCli(["sft", "conversations", run, "--out", "-"]), 2, "OUT_STDOUT_UNSUPPORTED");
    assert.equal(existsSync("-"), false);
  });
});

describe("integer options take decimal digits only", () => {
  const out = at("never");
  // [the command, the option whose value is refused]
  const refused: Array<[string[], string]> = [
    [["eval", "--env", "mock", "--n", "0x10"], "--n"],
    [["eval", "--env", "mock", "--n", "1e2"], "--n"],
    [["eval", "--env", "mock", "--n", "0b11"], "--n"],
    [["eval", "--env", "mock", "--seed", "1e1"], "--seed"],
    [["eval", "--env", "mock", "--concurrency", "0x4"], "--concurrency"],
    [["eval", "--env", "mock", "--num-trials", "1e6"], "--num-trials"],
    [["eval", "--env", "mock", "--max-turns", " 0o7"], "--max-turns"],
    [["dataset", "mock", "--n", "0x10", "--out", at("never.jsonl")], "--n"],
    [["audit", "mock", "--n", "1e2"], "--n"],
    [["show", "mock", "--index", "0x1"], "--index"],
  ];
  for (const [argv, option] of refused)
    it(`${argv.join(" ")}: exit 2 naming ${option}`, async () => {
      assertRefused(
        await runCli([...argv, ...(argv[0] === "eval" ? ["--out", out] : [])]),
        2,
        "OPTION_INVALID",
        new RegExp(`^toolgym: ${option} must be an integer`),
      );
      assert.equal(existsSync(out), false, "nothing ran");
      assert.equal(existsSync(at("never.jsonl")), false);
    });

  it("a number option refuses hex and Infinity but keeps decimals and exponents", async () => {
    const base = ["eval", "--env", "mock", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--out", out];
    assertRefused(await runCli([...base, "--timeout", "0x10"]), 2, "OPTION_INVALID", /--timeout must be a number, got '0x10'/);
    assertRefused(await runCli([...base, "--temperature", "Infinity"]), 2, "OPTION_INVALID", /--temperature must be a number/);
    // 1e-1 and 0.5 parse; the run then stops at the dead server's preflight (exit 1), after the options passed.
    const accepted = await runCli([...base, "--temperature", "1e-1", "--top-p", ".5", "--n", "1"]);
    assert.equal(accepted.code, 1, accepted.stderr);
    assert.match(accepted.stderr, /\[PREFLIGHT_FAILED\]/);
  });

  it("--top-k 0 is refused (-1 disables top-k; k starts at 1)", async () => {
    assertRefused(
      await runCli(["eval", "--env", "mock", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--top-k", "0", "--out", out]),
      2,
      "OPTION_INVALID",
      /--top-k 0 is refused: pass -1 to disable top-k, or a k of 1 or more/,
    );
  });

  it("too many trials names --num-trials, the option the user typed, not its older name", async () => {
    assertRefused(
      await runCli(["eval", "--env", "mock", "--n", "2", "--num-trials", "1000000", "--out", out]),
      2,
      "N_TOO_LARGE",
      /--n 2 × --num-trials 1000000/,
    );
    assert.equal(existsSync(out), false);
  });
});

describe("suite rows' data_dir", () => {
  it("a data_dir that is not a directory exits 2 with one line naming the row", async () => {
    const suite = at("data-dir.yaml");
    writeFileSync(suite, "name: dd\nrows:\n  - { benchmark: mq, env: musique, n: 3, config: { data_dir: /no/such/dir } }\n");
    assertRefused(
      await runCli(["eval", "--suite", suite, "--out", at("dd-out")]),
      2,
      "SUITE_DATA_MISSING",
      /^toolgym: mq: data_dir '\/no\/such\/dir' is not a directory/,
    );
    assert.equal(existsSync(at("dd-out")), false);
  });
});

describe("a UTF-8 byte order mark at the start of a Tau2 file", () => {
  it("is dropped: the first line is a row like the others, not a malformed-json issue", async () => {
    const lines = [...generateTau2Lines({ n: 4, seed: 3 })];
    const plain = at("plain.jsonl");
    const marked = at("bom.jsonl");
    writeFileSync(plain, `${lines.join("\n")}\n`);
    writeFileSync(marked, `\uFEFF${lines.join("\n")}\n`);
    const modelDirectory = qwen3TokenizerDir();
    const expected = await prepareTau2Sft({ input: plain, output: at("plain-rows.jsonl"), modelDirectory, maxTokens: 32768, workers: 0 });
    const report = await prepareTau2Sft({ input: marked, output: at("bom-rows.jsonl"), modelDirectory, maxTokens: 32768, workers: 0 });
    assert.equal(expected.rows_out, 4);
    assert.deepEqual(report.issues, []);
    assert.equal(report.rows_out, 4);
    assert.equal(readFileSync(at("bom-rows.jsonl"), "utf8"), readFileSync(at("plain-rows.jsonl"), "utf8"));
  });
});

describe("--config FILE: an environment config from a .json or .yaml file, as pipeline --config takes a file", () => {
  const json = '{"worldSize":20,"familyWeights":{"update":1}}';

  it("show and eval read the file as they read the same JSON text", async () => {
    const yaml = at("spa.yaml");
    writeFileSync(yaml, "worldSize: 20\nfamilyWeights: { update: 1 }\n");
    const fromText = await runCli(["show", "search_plan_act", "--index", "1", "--config", json, "--json"]);
    const fromFile = await runCli(["show", "search_plan_act", "--index", "1", "--config", yaml, "--json"]);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.equal(fromFile.stdout, fromText.stdout);
    const file = at("spa.json");
    writeFileSync(file, `\uFEFF${json}\n`);
    const ran = await runCli([
      "eval",
      "--env",
      "search_plan_act",
      "--config",
      file,
      "--n",
      "2",
      "--workers",
      "1",
      "--quiet",
      "--out",
      at("config-runs"),
      "--json",
    ]);
    assert.equal(ran.code, 0, ran.stderr);
    const [summary] = JSON.parse(ran.stdout) as Array<{ dir: string }>;
    const metadata = JSON.parse(readFileSync(join(summary!.dir, "metadata.json"), "utf8")) as {
      env: { config: { worldSize: number; familyWeights: Record<string, number> } };
    };
    assert.equal(metadata.env.config.worldSize, 20);
    assert.equal(metadata.env.config.familyWeights.update, 1);
  });

  it("a missing file, bad YAML, a list and a misspelt key exit 2 with one line", async () => {
    assertRefused(await runCli(["show", "mock", "--config", at("nope.yaml")]), 2, "FILE_NOT_FOUND", /--config: no such file/);
    const bad = at("bad-config.yaml");
    writeFileSync(bad, "a: [\n");
    assertRefused(await runCli(["show", "mock", "--config", bad]), 2, "CONFIG_FILE_INVALID", /not valid YAML/);
    const list = at("list-config.json");
    writeFileSync(list, "[1, 2]\n");
    assertRefused(await runCli(["show", "mock", "--config", list]), 2, "CONFIG_FILE_INVALID", /must hold one object/);
    const typo = at("typo-config.yaml");
    writeFileSync(typo, "worldSise: 20\n");
    assertRefused(await runCli(["show", "search_plan_act", "--config", typo]), 2, "ENV_CONFIG_INVALID", /worldSise/);
  });
});
