// What a careless user does on a fresh clone (issue 31): re-running a finished run, odd run ids, huge
// numbers, conflicting flags, out-of-range indices, a pipeline without its Python. Each case once broke;
// the CLI runs in-process with its own streams (test/support/run-cli.ts).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
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
