import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";

const bin = resolve(import.meta.dirname, "../bin/toolgym.js");
function toolgym(args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("toolgym CLI", () => {
  it("audit --json prints the documented shape and exits 0 on pass", () => {
    const result = toolgym(["audit", "mock", "--n", "40", "--json"]);
    assert.equal(result.code, 0, result.stderr);
    const output = JSON.parse(result.stdout);
    assert.equal(output.env, "mock");
    assert.equal(output.n, 40);
    assert.equal(output.verdict, "pass");
    assert.deepEqual(output.failures, []);
    for (const policy of ["oracle", "reckless_guess"]) {
      for (const key of ["mean", "ci_low", "ci_high", "components"]) assert.ok(key in output.policies[policy], `${policy}.${key}`);
    }
    assert.ok(output.policies.oracle.mean > output.policies.reckless_guess.ci_high);
  });

  it("an invalid --config gives a one-line error naming the bad key and exit code 2", () => {
    const result = toolgym(["audit", "mock", "--config", '{"keyz": 3}']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr.trim().split("\n").length, 1);
    assert.match(result.stderr, /'keyz'/);
  });

  it("an unknown environment is a clear usage error", () => {
    const result = toolgym(["show", "no_such_env"]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /unknown environment 'no_such_env'; available:/);
  });

  it("show prints the prompt and tools, and the solution only when asked", () => {
    const plain = toolgym(["show", "mock", "--seed", "3", "--index", "4", "--json"]);
    assert.equal(plain.code, 0, plain.stderr);
    const output = JSON.parse(plain.stdout);
    assert.equal(output.tools.length, 2);
    assert.equal(output.solution, undefined);
    const withSolution = JSON.parse(toolgym(["show", "mock", "--seed", "3", "--index", "4", "--json", "--solution"]).stdout);
    assert.equal(typeof withSolution.solution.answer, "string");
  });

  it("replay applies a calls file and prints the trajectory with the reward", () => {
    const shown = JSON.parse(toolgym(["show", "mock", "--seed", "2", "--index", "1", "--json", "--solution"]).stdout);
    const directory = mkdtempSync(join(tmpdir(), "toolgym-replay-"));
    const calls = join(directory, "calls.json");
    writeFileSync(
      calls,
      JSON.stringify([
        { name: "lookup", arguments: { key: shown.solution.key } },
        { name: "finish", arguments: { answer: shown.solution.answer } },
      ]),
    );
    const result = toolgym(["replay", "mock", "--seed", "2", "--index", "1", "--calls", calls, "--json"]);
    assert.equal(result.code, 0, result.stderr);
    const trajectory = JSON.parse(result.stdout);
    assert.equal(trajectory.reward.total, 1);
    assert.equal(trajectory.steps.length, 2);
  });

  it("eval --env mock writes trajectories and a summary", () => {
    const out = mkdtempSync(join(tmpdir(), "toolgym-eval-"));
    const result = toolgym(["eval", "--env", "mock", "--n", "12", "--out", out, "--quiet"]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /mock/);
    const results = findFiles(out, "results.jsonl");
    assert.equal(results.length, 1, `one results.jsonl under ${out}`);
    const lines = readFileSync(results[0] as string, "utf8")
      .trim()
      .split("\n");
    assert.equal(lines.length, 12);
    assert.ok(lines.every((line) => JSON.parse(line)));
    const summaries = findFiles(out, "summary.json");
    assert.equal(summaries.length, 1);
    const summary = JSON.parse(readFileSync(summaries[0] as string, "utf8"));
    assert.equal(summary.scored, 12);
    assert.equal(summary.mean, 1);
  });
});

function findFiles(directory: string, name: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: "utf8" })
    .filter((entry) => entry.endsWith(name))
    .map((entry) => join(directory, entry));
}
