import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { TAU2_DEFAULT_SEED, tau2TrialSeeds } from "../src/envs/tau2/trials.ts";
import { tau2MockEnvironment } from "../src/envs/tau2_mock/index.ts";
import { tau2RetailEnvironment } from "../src/envs/tau2_retail/index.ts";
import { tau2TelecomEnvironment } from "../src/envs/tau2_telecom/index.ts";
import { runCli } from "./support/run-cli.ts";

interface RowWithErrors {
  info: { trajectory: { reward: { errors?: { code: string }[] } | null } };
}

const work = mkdtempSync(join(tmpdir(), "toolgym-tau2-noisy-"));

/** tau2's pass^k: the mean over tasks of C(successes, k) / C(trials, k), a success being reward within 1e-6 of 1. */
function comb(n: number, k: number): number {
  let value = 1;
  for (let i = 0; i < k; i++) value = (value * (n - i)) / (i + 1);
  return value;
}

describe("tau2 noisy oracles", () => {
  it("exist for every tau2 env as genuine scripted agents after the oracle", () => {
    for (const env of [tau2MockEnvironment, tau2RetailEnvironment, tau2TelecomEnvironment]) {
      const ids = (env.policies ?? []).map((policy) => policy.id);
      assert.deepEqual(ids.slice(0, 4), ["oracle", "noisy_oracle_0.1", "noisy_oracle_0.3", "noisy_oracle_0.5"], env.id);
      assert.ok((env.policies ?? []).slice(0, 4).every((policy) => policy.kind === "genuine"));
    }
  });

  it("eval --num-trials 4 with noisy_oracle_0.3: 4 trials per task on tau2's seeds, trials differ, pass^k as tau2 computes it", async () => {
    const out = join(work, "runs");
    const result = await runCli(["eval", "--env", "tau2_mock", "--agent", "noisy_oracle_0.3", "--num-trials", "4", "--out", out, "--quiet"]);
    assert.equal(result.code, 0, result.stderr);
    const parent = join(out, readdirSync(out)[0] as string);
    const directory = join(parent, readdirSync(parent)[0] as string);
    const rows = readFileSync(join(directory, "results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { example_id: number; trial: number; trial_seed: number; reward: number });
    const seeds = tau2TrialSeeds(TAU2_DEFAULT_SEED, 4);
    const byTask = new Map<number, typeof rows>();
    for (const row of rows) byTask.set(row.example_id, [...(byTask.get(row.example_id) ?? []), row]);
    assert.equal(byTask.size, 10);
    for (const trials of byTask.values()) {
      assert.deepEqual(trials.map((row) => row.trial).sort(), [0, 1, 2, 3]);
      for (const row of trials) assert.equal(row.trial_seed, seeds[row.trial]);
    }
    const mixed = [...byTask.values()].filter((trials) => new Set(trials.map((row) => row.reward)).size > 1);
    assert.ok(mixed.length > 0, "the noise differs between trials of a task");
    const summary = JSON.parse(readFileSync(join(directory, "summary.json"), "utf8"));
    assert.equal(summary.tau2.num_trials, 4);
    // A simulation whose evaluation raised in tau2's evaluator is an infrastructure error in tau2's runner: left
    // out, with pass^k up to the fewest trials a task has left, each task over its own trials.
    const evaluated = [...byTask.values()].map((trials) =>
      trials.filter((row) => !(row as unknown as RowWithErrors).info.trajectory.reward?.errors?.some((error) => error.code === "TAU2_EVALUATION_ERROR")),
    );
    const K = Math.min(...evaluated.map((trials) => trials.length));
    assert.deepEqual(
      Object.keys(summary.tau2.pass_hat),
      Array.from({ length: K }, (_, k) => String(k + 1)),
    );
    for (let k = 1; k <= K; k++) {
      const expected =
        evaluated.reduce((sum, trials) => sum + comb(trials.filter((row) => Math.abs(row.reward - 1) <= 1e-6).length, k) / comb(trials.length, k), 0) /
        evaluated.length;
      assert.ok(Math.abs(summary.tau2.pass_hat[String(k)] - expected) < 1e-12, `pass^${k}: ${summary.tau2.pass_hat[String(k)]} vs ${expected}`);
    }
  });
});
