import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { buildReport, loadInputs, renderCard, renderMarkdown, ReportMismatchError } from "../src/eval/report/index.ts";
import { formatInterval, formatP } from "../src/eval/report/format.ts";
import { modelGeneration, runCli, writeSyntheticRun, type SyntheticEpisode } from "./report-support.ts";

/** Exact two-sided binomial (p = 0.5) tail with BigInt, independent of the report's log-space code. */
function exactMcNemar(discordantSmall: number, discordantTotal: number): number {
  let coefficient = 1n;
  let tail = 0n;
  for (let i = 0; i <= discordantSmall; i++) {
    if (i > 0) coefficient = (coefficient * BigInt(discordantTotal - i + 1)) / BigInt(i);
    tail += coefficient;
  }
  return Math.min(1, Number((2n * tail * 10n ** 30n) / 2n ** BigInt(discordantTotal)) / 1e30);
}

/** Standard normal CDF (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7). */
function normalCdf(z: number): number {
  const t = 1 / (1 + 0.3275911 * (Math.abs(z) / Math.SQRT2));
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-(z * z) / 2);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

function normalInterval(values: number[]): { mean: number; low: number; high: number; se: number } {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  const sd = Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (values.length - 1));
  const se = sd / Math.sqrt(values.length);
  return { mean, low: mean - 1.959964 * se, high: mean + 1.959964 * se, se };
}

// "qa": 200 tasks; base right on 0..59; trained wrong on 0..9 and right on 10..109 → 10 vs 50 discordant.
const N_QA = 200;
const baseEm = Array.from({ length: N_QA }, (_, i) => (i < 60 ? 1 : 0));
const trainedEm = Array.from({ length: N_QA }, (_, i) => (i >= 10 && i < 110 ? 1 : 0));
const qa = (em: number[], partial: number): SyntheticEpisode[] =>
  em.map((value) => ({ metrics: { em: value, f1: value === 1 ? 1 : partial, reward: value === 1 ? 1 : partial } }));
// "plan": 150 tasks; trained = base + 0.001 + a symmetric wiggle (no real change); the last 2 trained episodes errored.
const N_PLAN = 150;
const basePlan = Array.from({ length: N_PLAN }, (_, i) => 0.3 + 0.04 * (i % 10));
const trainedPlan = basePlan.map((value, i) => value + 0.001 + 0.01 * ((i % 5) - 2));

describe("report: two synthetic runs with known differences", () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), "toolgym-report-"));
    writeSyntheticRun({ root: join(root, "pair"), benchmark: "qa", label: "base", metrics: ["em", "f1"], episodes: qa(baseEm, 0.2) });
    writeSyntheticRun({ root: join(root, "pair"), benchmark: "qa", label: "trained", metrics: ["em", "f1"], episodes: qa(trainedEm, 0.25) });
    writeSyntheticRun({
      root: join(root, "pair"),
      benchmark: "plan",
      label: "base",
      metrics: ["reward"],
      episodes: basePlan.map((reward) => ({ metrics: { reward, outcome: reward } })),
    });
    writeSyntheticRun({
      root: join(root, "pair"),
      benchmark: "plan",
      label: "trained",
      metrics: ["reward"],
      episodes: trainedPlan.map((reward, i) => ({ metrics: { reward, outcome: reward }, errored: i >= N_PLAN - 2 })),
    });
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("computes means, CIs, p-values, Holm and the finding sentences", () => {
    const report = buildReport(loadInputs([join(root, "pair")]));
    assert.deepEqual(report.models, ["base", "trained"]);
    const row = (benchmark: string, metric: string) => report.rows.find((candidate) => candidate.benchmark === benchmark && candidate.metric === metric)!;
    const em = row("qa", "em");
    const f1 = row("qa", "f1");
    const plan = row("plan", "reward");

    // Means are exact; bootstrap CIs agree with the normal approximation.
    assert.equal(em.cells[0]!.mean, 0.3);
    assert.equal(em.cells[1]!.mean, 0.5);
    for (const [cell, values] of [
      [em.cells[0]!, baseEm],
      [em.cells[1]!, trainedEm],
    ] as const) {
      const normal = normalInterval(values);
      assert.ok(Math.abs(cell.low - normal.low) < 0.2 * 1.96 * normal.se, `low ${cell.low} vs ${normal.low}`);
      assert.ok(Math.abs(cell.high - normal.high) < 0.2 * 1.96 * normal.se, `high ${cell.high} vs ${normal.high}`);
      assert.equal(cell.n, N_QA);
    }

    // EM: McNemar's exact test on 10 vs 50 discordant pairs.
    const emComparison = em.comparisons[0]!;
    assert.equal(emComparison.test, "McNemar exact");
    assert.deepEqual(emComparison.discordant, { baselineOnly: 10, treatmentOnly: 50 });
    const expectedEmP = exactMcNemar(10, 60);
    assert.ok(Math.abs(emComparison.pValue - expectedEmP) / expectedEmP < 1e-9, `${emComparison.pValue} vs ${expectedEmP}`);
    assert.ok(Math.abs(emComparison.delta - 0.2) < 1e-12);
    const emNormal = normalInterval(trainedEm.map((value, i) => value - baseEm[i]!));
    assert.ok(Math.abs(emComparison.low - emNormal.low) < 0.2 * 1.96 * emNormal.se && Math.abs(emComparison.high - emNormal.high) < 0.2 * 1.96 * emNormal.se);

    // F1 is not binary: paired bootstrap, where every resample lies above 0 → the smallest p it can give.
    assert.equal(f1.comparisons[0]!.test, "paired bootstrap");
    assert.ok(f1.comparisons[0]!.pValue <= 2 / 10_001);

    // plan: Δ = +0.001, no real change; errored episodes excluded from the mean and the pairing.
    const planComparison = plan.comparisons[0]!;
    assert.equal(plan.cells[1]!.n, N_PLAN - 2);
    assert.equal(plan.cells[1]!.errored, 2);
    assert.equal(planComparison.n, N_PLAN - 2);
    const planDifferences = trainedPlan.slice(0, N_PLAN - 2).map((value, i) => value - basePlan[i]!);
    const planNormal = normalInterval(planDifferences);
    assert.ok(Math.abs(planComparison.delta - planNormal.mean) < 1e-12);
    const normalP = 2 * (1 - normalCdf(Math.abs(planNormal.mean / planNormal.se)));
    assert.ok(Math.abs(planComparison.pValue - normalP) < 0.05, `bootstrap p ${planComparison.pValue} vs normal ${normalP}`);
    assert.ok(planComparison.low < 0 && planComparison.high > 0);

    // Holm across the three rows, recomputed by hand.
    const raw = [emComparison.pValue, f1.comparisons[0]!.pValue, planComparison.pValue];
    const order = [0, 1, 2].sort((a, b) => raw[a]! - raw[b]!);
    const expectedHolm: number[] = [];
    let running = 0;
    order.forEach((index, rank) => {
      running = Math.max(running, Math.min(1, (3 - rank) * raw[index]!));
      expectedHolm[index] = running;
    });
    assert.deepEqual([emComparison.pHolm, f1.comparisons[0]!.pHolm, planComparison.pHolm], expectedHolm);
    assert.deepEqual([emComparison.significant, f1.comparisons[0]!.significant, planComparison.significant], [true, true, false]);

    // Finding sentences, true to the numbers.
    assert.equal(
      em.finding,
      `trained vs base: significant improvement (Δ = +0.200, 95% CI ${formatInterval(emComparison.low, emComparison.high, true)}, McNemar exact p = ${formatP(expectedEmP)}, Holm-adjusted p = ${formatP(emComparison.pHolm)}, n = 200)`,
    );
    assert.match(em.finding, /^trained vs base: significant improvement \(Δ = \+0\.200, 95% CI \[\+0\.1\d\d, \+0\.2\d\d\], McNemar exact p = 1\.6e−7, /);
    assert.match(
      f1.finding,
      /^trained vs base: significant improvement \(Δ = \+0\.185, 95% CI \[\+0\.1\d\d, \+0\.2\d\d\], paired bootstrap p ≤ 1\.0e−4, Holm-adjusted p ≤ 2\.0e−4, n = 200\)$/,
    );
    assert.match(
      plan.finding,
      /^trained vs base: no significant change \(Δ = \+0\.001, 95% CI \[−0\.00\d, \+0\.00\d\], paired bootstrap p = 0\.\d+, Holm-adjusted p = 0\.\d+, n = 148\)$/,
    );

    // Errored episodes are listed, never hidden.
    assert.deepEqual(
      report.errored.map((entry) => entry.id),
      ["plan/eval/0/148#0", "plan/eval/0/149#0"],
    );
    const markdown = renderMarkdown(report);
    assert.match(markdown, /\| qa \| EM \| 0\.300 \[0\.\d{3}, 0\.\d{3}\] \(n=200\) \| 0\.500 \[0\.\d{3}, 0\.\d{3}\] \(n=200\) \| \+0\.200 /);
    assert.match(markdown, /0\.\d{3} \[0\.\d{3}, 0\.\d{3}\] \(n=148, 2 errored\)/);
    assert.match(markdown, /plan \/ trained \/ `plan\/eval\/0\/149#0`: PROVIDER_FAILED: HTTP 503 after 5 retries/);
    const card = renderCard(report);
    assert.match(card, /^---\n/);
    assert.ok(card.includes(em.finding) && card.includes(plan.finding), "the card carries each row's finding");
    assert.match(card, /## Generation settings and per-benchmark n/);
  });

  it("refuses runs whose generation paths differ, naming the fields, unless --allow-mismatch", async () => {
    const dir = join(root, "mismatch");
    writeSyntheticRun({ root: dir, benchmark: "qa", label: "base", metrics: ["em"], episodes: qa(baseEm, 0) });
    writeSyntheticRun({
      root: dir,
      benchmark: "qa",
      label: "trained",
      metrics: ["em"],
      episodes: qa(trainedEm, 0),
      seed: 1,
      generation: modelGeneration({
        sampling: { temperature: 1.0, top_p: 0.95, top_k: 20, max_tokens: 2048, seed: 0 },
        chatTemplateKwargs: { enable_thinking: true },
        maxTurns: 32,
        chatTemplateHash: "sha256:other",
      }),
    });
    assert.throws(
      () => buildReport(loadInputs([dir])),
      (error: unknown) => {
        assert.ok(error instanceof ReportMismatchError);
        for (const field of ["sampling.temperature", "chatTemplateKwargs.enable_thinking", "maxTurns", "chatTemplateHash", "env.seed", "taskSetHash"])
          assert.ok(error.fields.includes(field), `names ${field}`);
        assert.match(error.message, /sampling\.temperature \(base 0\.6 vs trained 1\)/);
        assert.match(error.message, /--allow-mismatch/);
        assert.ok(!error.fields.includes("toolSchemasHash") && !error.fields.includes("protocol"), "only the differing fields are named");
        return true;
      },
    );
    const refused = await runCli(["report", dir]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refusing to compare.*sampling\.temperature.*\[REPORT_MISMATCH\]/s);
    const allowed = await runCli(["report", dir, "--allow-mismatch"]);
    assert.equal(allowed.code, 0);
    assert.match(allowed.stdout, /\| qa ⚠ \| EM \|/);
    assert.match(allowed.stdout, /Compared despite mismatches \(--allow-mismatch\)/);
    assert.match(allowed.stdout, /`sampling\.temperature` differs/);
  });
});
