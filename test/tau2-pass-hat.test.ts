import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { startFaultServer, type ChatRequestBody } from "../src/testing/fault-server.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * Trials and pass^k over a tau2 environment through the command line: `--num-trials K` writes K rows per
 * task and summary.json's `tau2` block, whose pass^k this file recomputes from results.jsonl with its own
 * implementation of tau2's formula (exact binomials in BigInt, success within 1e-6 of 1).
 */
const work = mkdtempSync(join(tmpdir(), "toolgym-tau2-trials-"));

/** C(n, k) exactly. */
function binomial(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let result = 1n;
  for (let i = 0; i < k; i++) result = (result * BigInt(n - i)) / BigInt(i + 1);
  return result;
}

interface Row {
  example_id: number;
  trial: number;
  trial_seed: number;
  reward: number | null;
  status: string;
  metrics: Record<string, number>;
  not_computed?: string[];
  info: { trajectory: { reward: { errors: Array<{ code: string }> } | null } };
}

function readRun(root: string): { rows: Row[]; summary: Record<string, unknown>; metadata: Record<string, unknown> } {
  const parent = readdirSync(root).map((name) => join(root, name))[0] as string;
  const directory = join(parent, readdirSync(parent)[0] as string);
  const rows = readFileSync(join(directory, "results.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Row);
  return {
    rows,
    summary: JSON.parse(readFileSync(join(directory, "summary.json"), "utf8")),
    metadata: JSON.parse(readFileSync(join(directory, "metadata.json"), "utf8")),
  };
}

// The noisy oracle draws its mistakes from each trial's seed, so a task's trials differ and pass^k falls with k.
const agent = "noisy_oracle_0.3";

describe("tau2 trials and pass^k", () => {
  it(`eval --env tau2_mock --agent ${agent} --num-trials 4: 4 trials per task and tau2's pass^k`, { timeout: 120_000 }, async () => {
    const out = join(work, "mock");
    const result = await runCli(["eval", "--env", "tau2_mock", "--agent", agent, "--num-trials", "4", "--out", out, "--quiet", "--workers", "1"]);
    assert.equal(result.code, 0, result.stderr);
    const { rows, summary, metadata } = readRun(out);
    const tasks = new Map<number, Row[]>();
    for (const row of rows) tasks.set(row.example_id, [...(tasks.get(row.example_id) ?? []), row]);
    assert.equal(tasks.size, 10, "every task of the mock base split (no --n: all of them)");
    const seeds = (metadata.env as { trialSeeds: number[] }).trialSeeds;
    // tau2's runner with its default seed 300 runs these trials (CPython: random.seed(300); 4 × randint(0, 1000000)).
    assert.equal((metadata.env as { seed: number }).seed, 300);
    assert.deepEqual(seeds, [626729, 373753, 361454, 1567]);
    for (const [, trials] of tasks) {
      assert.deepEqual(trials.map((row) => row.trial).sort(), [0, 1, 2, 3]);
      for (const row of trials) assert.equal(row.trial_seed, seeds[row.trial]);
    }

    const block = summary.tau2 as {
      num_trials: number;
      tasks: number;
      avg_reward: number;
      pass_hat: Record<string, number>;
      pass_hat_ci: Record<string, number[]>;
      infrastructure_errors: number;
    };
    // tau2's runner records a simulation whose evaluation raised as an infrastructure error and its
    // metrics leave those out (toolgym scores them 0 in the run's mean, and leaves them out here).
    const raised = (row: Row) => (row.info.trajectory.reward?.errors ?? []).some((error) => error.code === "TAU2_EVALUATION_ERROR");
    const counted = rows.filter((row) => row.status === "scored" && !raised(row));
    assert.equal(block.infrastructure_errors, rows.length - counted.length);
    const byTask = new Map<number, Row[]>();
    for (const row of counted) byTask.set(row.example_id, [...(byTask.get(row.example_id) ?? []), row]);
    const maxK = Math.min(...[...byTask.values()].map((trials) => trials.length));
    assert.equal(block.num_trials, 4);
    assert.equal(block.tasks, byTask.size);
    assert.deepEqual(
      Object.keys(block.pass_hat),
      Array.from({ length: maxK }, (_, k) => String(k + 1)),
    );
    const expectedAverage = counted.reduce((sum, row) => sum + (row.reward as number), 0) / counted.length;
    assert.ok(Math.abs(block.avg_reward - expectedAverage) < 1e-12);
    for (let k = 1; k <= maxK; k++) {
      let total = 0;
      for (const trials of byTask.values()) {
        const successes = trials.filter((row) => row.reward !== null && Math.abs(row.reward - 1) <= 1e-6 && !row.not_computed?.length).length;
        total += Number(binomial(successes, k)) / Number(binomial(trials.length, k));
      }
      assert.ok(Math.abs((block.pass_hat[String(k)] as number) - total / byTask.size) < 1e-12, `pass^${k}`);
      const [low, high] = block.pass_hat_ci[String(k)] as number[];
      assert.ok((low as number) <= (block.pass_hat[String(k)] as number) && (block.pass_hat[String(k)] as number) <= (high as number));
    }
    assert.ok((block.pass_hat[String(maxK)] as number) < (block.pass_hat["1"] as number), "the noise makes some tasks pass on some trials only");
    assert.match(result.stdout, /τ²-bench tau2_mock .*pass\^1 \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] · pass\^2 /);

    const report = await runCli(["report", out, "--format", "json"]);
    assert.equal(report.code, 0, report.stderr);
    const row = (JSON.parse(report.stdout) as { rows: Array<{ metric: string; tau2?: { pass_hat: Record<string, number> } }> }).rows.find(
      (candidate) => candidate.metric === "reward",
    );
    assert.deepEqual(row?.tau2?.pass_hat, block.pass_hat, "report --format json carries the same block");
  });

  it("a model agent sends its trial's seed with every request, as tau2 sets it on its agent", { timeout: 120_000 }, async () => {
    // A scripted chat server: only the requests toolgym sends are under test (the replies end each turn).
    const bodies: ChatRequestBody[] = [];
    const server = await startFaultServer({ respond: () => ({ content: "Could you tell me more?" }), onRequest: (body) => bodies.push(body) });
    try {
      const out = join(work, "model");
      const args = ["eval", "--env", "tau2_mock", "--n", "2", "--num-trials", "3", "--max-turns", "2", "--base-url", server.url, "--model", "m"];
      const result = await runCli([...args, "--out", out, "--quiet", "--workers", "1"]);
      assert.equal(result.code, 0, result.stderr);
      const seeds = new Set(bodies.map((body) => body.seed));
      assert.deepEqual([...seeds].sort(), [361454, 373753, 626729], "tau2's seeds for base seed 300 (CPython), one per trial");
      assert.equal(bodies.length, 2 * 3 * 2, "two turns of each of 6 episodes");
      for (const seed of seeds) assert.equal(bodies.filter((body) => body.seed === seed).length, 4, "2 tasks × 2 turns of each trial carry its seed");
      const refused = await runCli([...args, "--sampling-seed", "7", "--out", join(work, "refused")]);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /drop --sampling-seed/);
    } finally {
      await server.close();
    }
  });

  it("--num-trials and --samples together are refused; --n all runs every task", { timeout: 60_000 }, async () => {
    const both = await runCli(["eval", "--env", "tau2_mock", "--num-trials", "2", "--samples", "2", "--out", join(work, "both")]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /OPTION_CONFLICT/);
    const generated = await runCli(["eval", "--env", "search_plan_act", "--n", "all", "--out", join(work, "generated")]);
    assert.equal(generated.code, 2);
    assert.match(generated.stderr, /--n all needs a fixed dataset/);
    const all = await runCli(["eval", "--env", "tau2_mock", "--n", "all", "--out", join(work, "all"), "--quiet", "--workers", "1"]);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(readRun(join(work, "all")).rows.length, 10);
  });
});
