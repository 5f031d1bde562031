// What a careless user does on a fresh clone (issue 31): re-running a finished run, odd run ids, huge
// numbers, conflicting flags, out-of-range indices, a pipeline without its Python. Each case once broke;
// the CLI runs in-process with its own streams (test/support/run-cli.ts).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { runCli } from "./support/run-cli.ts";

const work = mkdtempSync(join(tmpdir(), "toolgym-careless-"));
const at = (name: string) => join(work, name);
after(() => rmSync(work, { recursive: true, force: true }));

/** One coded line on stderr, nothing on stdout. */
function assertRefused(result: { code: number; stdout: string; stderr: string }, exit: number, code: string, says?: RegExp): void {
  assert.equal(result.code, exit, result.stderr);
  const lines = result.stderr.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0] as string, new RegExp(`^toolgym: \\S.* \\[${code}\\]$`));
  if (says) assert.match(lines[0] as string, says);
}

describe("toolgym pipeline checks its Python before any stage", () => {
  it("a Python without torch/transformers/trl: one line naming the Python and the fix, exit 2, nothing written", async () => {
    // A real Python with nothing installed: a bare venv.
    const venv = at("bare-venv");
    const made = spawnSync("python3", ["-m", "venv", "--without-pip", venv], { encoding: "utf8" });
    assert.equal(made.status, 0, made.stderr);
    const saved = process.env.TOOLGYM_PYTHON;
    process.env.TOOLGYM_PYTHON = join(venv, "bin/python");
    try {
      const out = at("pipeline");
      const result = await runCli(["pipeline", "--preset", "tiny", "--out", out]);
      assertRefused(
        result,
        2,
        "PYTHON_PACKAGES_MISSING",
        /TOOLGYM_PYTHON=.*bare-venv.* lacks torch, transformers, trl, peft; run 'bash scripts\/setup-python\.sh'/,
      );
      assert.equal(existsSync(out), false, "no stage ran");
      process.env.TOOLGYM_PYTHON = at("no-such-python");
      assertRefused(await runCli(["pipeline", "--preset", "tiny", "--out", out]), 2, "PYTHON_UNAVAILABLE", /does not run \(ENOENT\)/);
    } finally {
      if (saved === undefined) delete process.env.TOOLGYM_PYTHON;
      else process.env.TOOLGYM_PYTHON = saved;
    }
  });
});

describe("eval: a run directory is appended to only under --resume", () => {
  it("re-running a finished run without --resume is refused, naming --resume and --run-id, and leaves it as it was", async () => {
    const out = at("rerun");
    const first = await runCli(["eval", "--env", "musique", "--n", "4", "--run-id", "tour", "--quiet", "--out", out]);
    assert.equal(first.code, 0, first.stderr);
    const results = join(out, "musique--scripted-oracle", "tour", "results.jsonl");
    const before = readFileSync(results, "utf8");
    const again = await runCli(["eval", "--env", "musique", "--n", "4", "--run-id", "tour", "--quiet", "--out", out]);
    assertRefused(again, 2, "RUN_EXISTS", /--resume.*--run-id/);
    assert.equal(readFileSync(results, "utf8"), before, "no line appended");
    const resumed = await runCli(["eval", "--env", "musique", "--n", "4", "--run-id", "tour", "--quiet", "--out", out, "--resume"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(readFileSync(results, "utf8").split("\n").filter(Boolean).length, 4);
  });

  it("two environments with one --run-id: the second's existing run is refused before the first runs", async () => {
    const out = at("rerun-two");
    assert.equal((await runCli(["eval", "--env", "babyai", "--n", "2", "--run-id", "r", "--quiet", "--out", out])).code, 0);
    assertRefused(await runCli(["eval", "--env", "mock,babyai", "--n", "2", "--run-id", "r", "--quiet", "--out", out]), 2, "RUN_EXISTS");
    assert.equal(existsSync(join(out, "mock--scripted-oracle")), false, "mock did not run");
    assertRefused(await runCli(["eval", "--env", "mock,mock", "--n", "2", "--run-id", "s", "--quiet", "--out", out]), 2, "OPTION_CONFLICT", /share/);
  });
});

describe("eval: user-supplied path components stay under --out", () => {
  for (const runId of ["../../escape", "..", "a/b", ".hidden", ""]) {
    it(`--run-id '${runId}' is refused`, async () => {
      const out = at("paths/runs");
      const result = await runCli(["eval", "--env", "mock", "--n", "2", "--run-id", runId, "--quiet", "--out", out]);
      assertRefused(result, 2, runId === "" ? "OPTION_EMPTY" : "PATH_COMPONENT_INVALID");
      assert.deepEqual(
        readdirSync(work).filter((name) => name === "escape"),
        [],
      );
      assert.equal(existsSync(at("paths")), false, "nothing written");
    });
  }
  it("a model label that is not one directory name is refused", async () => {
    const result = await runCli([
      "eval",
      "--env",
      "mock",
      "--n",
      "2",
      "--model",
      "..",
      "--base-url",
      "http://127.0.0.1:9/v1",
      "--quiet",
      "--out",
      at("labels"),
    ]);
    assertRefused(result, 2, "PATH_COMPONENT_INVALID", /model label '\.\.'/);
    assert.equal(existsSync(at("labels")), false);
  });
});

describe("eval: everything is checked before the first episode", () => {
  it("an agent the second environment lacks: exit 2 and no run of the first", async () => {
    const out = at("agents");
    const result = await runCli(["eval", "--env", "search_plan_act,babyai", "--agent", "noisy_oracle_0.3", "--n", "2", "--quiet", "--out", out]);
    assertRefused(result, 2, "POLICY_UNKNOWN", /babyai/);
    assert.equal(existsSync(out), false);
  });

  const huge: Array<[string[], string]> = [
    [["--n", "99999999999999999999"], "OPTION_INVALID"],
    [["--n", "100000000"], "N_TOO_LARGE"],
    [["--n", "1000", "--samples", "1001"], "N_TOO_LARGE"],
    [["--n", "2", "--samples", "99999999999999999999"], "OPTION_INVALID"],
  ];
  for (const [flags, code] of huge) {
    it(`huge counts are refused with the reason: ${flags.join(" ")}`, async () => {
      const out = at("huge");
      const result = await runCli(["eval", "--env", "mock", ...flags, "--quiet", "--out", out]);
      assertRefused(result, 2, code, code === "N_TOO_LARGE" ? /1,000,000 episodes in one run .*--seed/ : /9007199254740991/);
      assert.equal(existsSync(out), false);
    });
  }

  const conflicts: Array<[string[], RegExp]> = [
    [["--env", "mock", "--temperature", "0.7"], /--temperature applies only to a model/],
    [["--env", "mock", "--top-p", "0.9", "--max-tokens", "8", "--no-preflight"], /--top-p, --max-tokens, --no-preflight apply only/],
    [["--suite", "quick", "--env", "babyai", "--n", "3"], /drop --env, --n/],
    [["--suite", "quick", "--resume"], /drop --resume/],
    [["--env", "mock", "--data-dir", "x"], /--data-dir is read by --suite seed-card only/],
  ];
  for (const [flags, says] of conflicts) {
    it(`conflicting flags are refused: ${flags.join(" ")}`, async () => {
      const out = at("conflicts");
      assertRefused(await runCli(["eval", ...flags, "--quiet", "--out", out]), 2, "OPTION_CONFLICT", says);
      assert.equal(existsSync(out), false);
    });
  }
});

describe("outputs: written to a temporary file and renamed; an existing file only with --force", () => {
  it("the card's Reproduce block names the folders the report read, and report never overwrites a file without --force", async () => {
    const out = at("card-runs");
    assert.equal((await runCli(["eval", "--env", "musique", "--n", "4", "--quiet", "--out", out])).code, 0);
    const readme = at("README.md");
    writeFileSync(readme, "# a project's own README\n");
    const refused = await runCli(["report", out, "--card", "--out", readme]);
    assertRefused(refused, 2, "OUT_EXISTS", /--force/);
    assert.equal(readFileSync(readme, "utf8"), "# a project's own README\n", "untouched");
    const card = await runCli(["report", out, "--card", "--out", readme, "--force"]);
    assert.equal(card.code, 0, card.stderr);
    const text = readFileSync(readme, "utf8");
    const reproduce = text.slice(text.indexOf("## Reproduce"));
    assert.ok(reproduce.includes(`npx toolgym eval --env musique --split dev --seed 0 --n 4 --config`), reproduce);
    assert.ok(reproduce.includes(`--agent oracle --out ${out}\n`), reproduce);
    assert.ok(reproduce.includes(`npx toolgym report ${out} --card --out card.md\n`), reproduce);
    assert.doesNotMatch(reproduce, /README\.md|runs\/card/);
  });

  it("--out a directory is refused before anything is written, and no temporary file is left", async () => {
    const out = at("export-runs");
    assert.equal((await runCli(["eval", "--env", "mock", "--n", "2", "--quiet", "--out", out, "--run-id", "r"])).code, 0);
    const directory = at("an-existing-folder");
    mkdirSync(directory);
    for (const argv of [
      ["report", out, "--out", directory],
      ["view", out, "--out", directory],
      ["dataset", "mock", "--n", "2", "--out", directory],
      ["sft", "synth", "--n", "2", "--out", directory],
    ]) {
      assertRefused(await runCli(argv), 2, "OUT_IS_DIRECTORY");
    }
    assert.deepEqual(
      readdirSync(work).filter((name) => name.includes(".partial")),
      [],
    );
    const existing = at("existing.jsonl");
    writeFileSync(existing, "keep\n");
    assertRefused(await runCli(["dataset", "mock", "--n", "2", "--out", existing]), 2, "OUT_EXISTS");
    assertRefused(await runCli(["sft", "synth", "--n", "2", "--out", existing]), 2, "OUT_EXISTS");
    assert.equal(readFileSync(existing, "utf8"), "keep\n");
    assert.equal((await runCli(["sft", "synth", "--n", "2", "--out", existing, "--force"])).code, 0);
    assert.notEqual(readFileSync(existing, "utf8"), "keep\n");
  });

  it("an error inside the writer names --out, never the temporary file", async () => {
    const { writeOutputAtomically } = await import("../src/cli/output-file.ts");
    const out = at("named.txt");
    await assert.rejects(
      writeOutputAtomically(out, (path) => {
        throw new Error(`cannot write ${path}`);
      }),
      (error: Error) => {
        assert.equal(error.message, `cannot write ${out}`);
        return true;
      },
    );
    assert.deepEqual(
      readdirSync(work).filter((name) => name.includes(".partial")),
      [],
    );
  });
});

describe("report: flags that conflict, runs of different task sets", () => {
  it("report --card with --format html or json is refused; --format md is the card's own", async () => {
    const out = at("card-format");
    assert.equal((await runCli(["eval", "--env", "mock", "--n", "2", "--quiet", "--out", out])).code, 0);
    for (const format of ["html", "json"]) {
      const file = at(`card.${format}`);
      assertRefused(await runCli(["report", out, "--card", "--format", format, "--out", file]), 2, "OPTION_CONFLICT", /--card writes a Markdown/);
      assert.equal(existsSync(file), false);
    }
    assert.equal((await runCli(["report", out, "--card", "--format", "md"])).code, 0);
  });

  it("report --card over an eval and a quick suite: every model's rows with their own CIs, no paired test across task sets, a note", async () => {
    const out = at("tour-runs");
    assert.equal((await runCli(["eval", "--env", "musique", "--n", "40", "--quiet", "--out", out])).code, 0);
    assert.equal((await runCli(["eval", "--suite", "quick", "--quiet", "--out", join(out, "quick")])).code, 0);
    const result = await runCli(["report", out, "--card"]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr.split("\n").filter(Boolean).length <= 2, true, result.stderr);
    const card = result.stdout;
    assert.match(
      card,
      /^\| MuSiQue \(search\) \| EM \| 40 \| 1\.000 \[1\.000, 1\.000\] \(n=8\) \| 1\.000 \[1\.000, 1\.000\] \(n=40\) \| scripted: 1\.000 .*; scripted-oracle: 1\.000 /m,
    );
    assert.match(card, /scripted-oracle is not compared with scripted: different task sets \(env\.n: scripted 8 vs scripted-oracle 40/);
    assert.doesNotMatch(card, /Compared despite mismatches|paired-bootstrap/);
    assert.match(card, /^\| BALROG BabyAI \| mean episode return \| 5 \| 0\.927/m);
  });

  it("a model name's HTML is shown as text in the Markdown card and report", async () => {
    const { writeSyntheticRun } = await import("./report-support.ts");
    const root = at("html-name");
    writeSyntheticRun({
      root,
      benchmark: "qa",
      label: "base",
      name: "<img src=x onerror=alert(1)>",
      metrics: ["em"],
      episodes: [{ metrics: { em: 1 } }, { metrics: { em: 0 } }],
    });
    for (const argv of [
      ["report", root, "--card"],
      ["report", root],
    ]) {
      const result = await runCli(argv);
      assert.equal(result.code, 0, result.stderr);
      // Outside code blocks (where a shell command quotes the name as text).
      assert.doesNotMatch(result.stdout.replace(/```[\s\S]*?```/g, ""), /<img/);
      assert.match(result.stdout, /&lt;img src=x onerror=alert\(1\)>/);
    }
  });
});

describe("messages a careless user reads", () => {
  it("a missing suite file or model directory is a usage error (exit 2)", async () => {
    assertRefused(await runCli(["eval", "--suite", at("missing.yaml")]), 2, "FILE_NOT_FOUND", /--suite: no such file/);
    const input = at("tau2.jsonl");
    writeFileSync(input, "{}\n");
    assertRefused(
      await runCli(["sft", "tau2", input, "--model-dir", work, "--out", at("rows.jsonl")]),
      2,
      "MODEL_DIR_INVALID",
      /tokenizer\.json or tokenizer_config\.json/,
    );
  });

  it("a missing option of a subcommand points at that subcommand's --help; view --help prints each default once", async () => {
    assertRefused(await runCli(["sft", "synth"]), 2, "OPTION_REQUIRED", /see toolgym sft synth --help/);
    const help = await runCli(["view", "--help"]);
    assert.equal(help.code, 0);
    assert.equal(help.stdout.match(/2000/g)?.length, 1, help.stdout);
  });

  it("a progress line fits 80 columns and keeps its ETA, whatever the label", async () => {
    const { progressLine } = await import("../src/eval/progress.ts");
    for (const label of ["mock scripted-oracle", "search_plan_ood scripted-noisy_oracle_0.3", "x".repeat(120)]) {
      const line = progressLine({ label, value: 547008, total: 1000000, rate: 23330.5, eta: "20s", errored: 12, columns: 80 });
      assert.ok(line.length <= 79, `${line.length}: ${line}`);
      assert.match(line, /547008\/1000000 {2}23330\.5 ep\/s {2}ETA 20s {2}errors 12$/);
    }
    assert.match(progressLine({ label: "mock scripted-oracle", value: 1, total: 2, rate: 1, eta: "1s", errored: 0 }), /^mock scripted-oracle █{12}░{12} /);
  });

  it("an HTML chart title wraps instead of being clipped, and reads the same", async () => {
    const { wrapTitle, barChart } = await import("../src/eval/report/svg.ts");
    const title = "ch_plan_ood — collateralMutations";
    const lines = wrapTitle(title, 192);
    assert.deepEqual(lines, ["ch_plan_ood — ", "collateralMutations"]);
    assert.equal(lines.join(""), title);
    const svg = barChart({ title, label: "l", groups: [{ label: "g", bars: [{ label: "a", value: 1, color: "#000" }] }], size: { width: 200, height: 180 } });
    assert.match(svg, /height="194"/);
    assert.match(svg, /<tspan x="100" dy="0">ch_plan_ood — <\/tspan><tspan x="100" dy="14">collateralMutations<\/tspan>/);
  });
});

describe("indices and counts against the environment's task count", () => {
  it("show: the last task is shown, one past it is a usage error, for every environment with a fixed dataset (tau2's wrap-around included)", async () => {
    const { listEnvironments } = await import("../src/envs/registry.ts");
    const fixed = listEnvironments().filter((env) => env.taskCount);
    assert.ok(fixed.some((env) => env.id === "musique") && fixed.some((env) => env.id === "tau2_mock"));
    for (const env of fixed) {
      const count = env.taskCount?.({ split: env.defaultSplit, config: env.configSchema.parse({}) as never }) as number;
      const last = await runCli(["show", env.id, "--index", String(count - 1), "--json"]);
      assert.equal(last.code, 0, `${env.id}: ${last.stderr}`);
      assert.equal((JSON.parse(last.stdout) as { index: number }).index, count - 1);
      for (const index of [count, 1000000])
        assertRefused(await runCli(["show", env.id, "--index", String(index)]), 2, "INDEX_OUT_OF_RANGE", new RegExp(`from 0 to ${count - 1}`));
    }
    const calls = at("calls.json");
    writeFileSync(calls, "[]");
    assertRefused(await runCli(["replay", "musique", "--index", "40", "--calls", calls]), 2, "INDEX_OUT_OF_RANGE");
  });

  it("audit over a fixed dataset smaller than its default audits every task, several trials each, with a note; --n beyond it is refused as eval refuses it", async () => {
    const whole = await runCli(["audit", "tau2_mock", "--json"]);
    assert.equal(whole.code, 0, whole.stderr);
    type Audit = { n: number; trials: number; verdict: string; policies: Record<string, { n: number; ci_low: number; ci_high: number }> };
    const audit = JSON.parse(whole.stdout) as Audit;
    assert.deepEqual([audit.n, audit.trials, audit.verdict, audit.policies.oracle?.n], [10, 20, "pass", 200]);
    assert.match(whole.stderr, /^toolgym: note: tau2_mock has 10 tasks \(split base\); auditing all 10, 20 trial\(s\) each \(--num-trials\)$/m);
    // The oracle plays every trial alike, so its CI over the 10 tasks must not narrow with more trials.
    const once = JSON.parse((await runCli(["audit", "tau2_mock", "--json", "--policies", "oracle", "--num-trials", "1"])).stdout) as Audit;
    assert.equal(once.policies.oracle?.n, 10);
    assert.deepEqual([once.policies.oracle?.ci_low, once.policies.oracle?.ci_high], [audit.policies.oracle?.ci_low, audit.policies.oracle?.ci_high]);
    assertRefused(await runCli(["audit", "tau2_mock", "--n", "20"]), 2, "N_BEYOND_DATASET", /10 distinct tasks/);
    assertRefused(await runCli(["eval", "--env", "tau2_mock", "--n", "20", "--out", at("audit-eval")]), 2, "N_BEYOND_DATASET", /10 distinct tasks/);
    assertRefused(await runCli(["audit", "mock", "--n", "99999999999999999999"]), 2, "OPTION_INVALID");
  });
});
