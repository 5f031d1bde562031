import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { binomialTwoSidedHalf, holmAdjust, mcnemarExact, pairedBootstrap } from "./statistics.ts";

/** Exact two-sided binomial p-value with BigInt arithmetic: an independent check of the log-space sum. */
function exactBinomialP(k: number, n: number): number {
  const small = Math.min(k, n - k);
  let coefficient = 1n;
  let tail = 0n;
  for (let i = 0; i <= small; i++) {
    if (i > 0) coefficient = (coefficient * BigInt(n - i + 1)) / BigInt(i);
    tail += coefficient;
  }
  const scale = 10n ** 30n;
  const ratio = Number((2n * tail * scale) / 2n ** BigInt(n)) / 1e30;
  return Math.min(1, ratio);
}

describe("report statistics", () => {
  it("McNemar's exact p-value equals the exact binomial tail computed with BigInt", () => {
    for (const [b, c] of [
      [10, 50],
      [0, 7],
      [3, 3],
      [12, 25],
      [140, 180],
      [1, 0],
      [900, 1000],
    ] as const) {
      const baseline = [...Array(b).fill(1), ...Array(c).fill(0), 1, 0];
      const treatment = [...Array(b).fill(0), ...Array(c).fill(1), 1, 0];
      const result = mcnemarExact(baseline, treatment);
      assert.equal(result.baselineOnly, b);
      assert.equal(result.treatmentOnly, c);
      const expected = exactBinomialP(Math.min(b, c), b + c);
      assert.ok(Math.abs(result.pValue - expected) <= 1e-12 + 1e-9 * expected, `b=${b} c=${c}: ${result.pValue} vs ${expected}`);
    }
    // Hand value: 1 vs 9 discordant pairs → p = 2·(C(10,0) + C(10,1))/2^10 = 22/1024.
    assert.ok(Math.abs(binomialTwoSidedHalf(1, 10) - 22 / 1024) < 1e-15);
    assert.equal(binomialTwoSidedHalf(0, 0), 1);
  });

  it("Holm's adjustment matches a hand computation and is monotone", () => {
    // p sorted: 0.01 (×3 = 0.03), 0.02 (×2 = 0.04), 0.04 (×1 = 0.04).
    assert.deepEqual(
      holmAdjust([0.04, 0.01, 0.02]).map((p) => Number(p.toFixed(10))),
      [0.04, 0.03, 0.04],
    );
    // Monotonicity: 0.01×3 = 0.03, then 0.012×2 = 0.024 is lifted to 0.03, then 0.04×1.
    assert.deepEqual(
      holmAdjust([0.012, 0.01, 0.04]).map((p) => Number(p.toFixed(10))),
      [0.03, 0.03, 0.04],
    );
    const withNaN = holmAdjust([0.01, Number.NaN]);
    assert.equal(withNaN[0], 0.01);
    assert.ok(Number.isNaN(withNaN[1]));
  });

  it("the paired-bootstrap CI agrees with the normal approximation and its p-value reflects the effect", () => {
    const random = (() => {
      let state = 12345;
      return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 4294967296;
    })();
    const n = 400;
    const baseline = Array.from({ length: n }, () => random());
    const shifted = baseline.map((value) => value + 0.05 + (random() - 0.5) * 0.4);
    const result = pairedBootstrap(baseline, shifted, { seed: "test" });
    const differences = shifted.map((value, index) => value - (baseline[index] as number));
    const meanDifference = differences.reduce((sum, value) => sum + value, 0) / n;
    const sd = Math.sqrt(differences.reduce((sum, value) => sum + (value - meanDifference) ** 2, 0) / (n - 1));
    const halfWidth = (1.959964 * sd) / Math.sqrt(n);
    assert.ok(Math.abs(result.delta - meanDifference) < 1e-12);
    assert.ok(Math.abs(result.low - (meanDifference - halfWidth)) < 0.15 * halfWidth, `low ${result.low} vs ${meanDifference - halfWidth}`);
    assert.ok(Math.abs(result.high - (meanDifference + halfWidth)) < 0.15 * halfWidth, `high ${result.high} vs ${meanDifference + halfWidth}`);
    assert.ok(result.pValue < 0.001, `p = ${result.pValue}`);
    const same = pairedBootstrap(baseline, baseline, { seed: "test" });
    assert.equal(same.delta, 0);
    assert.equal(same.pValue, 1);
  });
});
