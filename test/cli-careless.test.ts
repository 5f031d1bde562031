// What a careless user does on a fresh clone (issue 31): re-running a finished run, odd run ids, huge
// numbers, conflicting flags, out-of-range indices, a pipeline without its Python. Each case once broke;
// the CLI runs in-process with its own streams (test/support/run-cli.ts).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
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
