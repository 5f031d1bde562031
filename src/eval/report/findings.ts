import type { ReportComparison, ReportRow } from "./build.ts";
import { formatInterval, formatPValue, formatSigned, formatValue } from "./format.ts";

/**
 * One comparison as a sentence that is true to the statistics: "significant improvement" or
 * "significant decrease" only when the Holm-adjusted p-value is below alpha, else "no significant change",
 * always with Δ, its 95% CI and both p-values.
 */
export function comparisonSentence(comparison: ReportComparison): string {
  if (comparison.n === 0) return "no comparison: no task was scored in both runs";
  const verdict = !comparison.significant
    ? "no significant change"
    : comparison.delta > 0
      ? "significant improvement"
      : comparison.delta < 0
        ? "significant decrease"
        : "significant change";
  const statistics = `Δ = ${formatSigned(comparison.delta)}, 95% CI ${formatInterval(comparison.low, comparison.high, true)}, ${comparison.test} ${formatPValue(comparison.pValue, comparison.pFloor)}, Holm-adjusted ${formatPValue(comparison.pHolm, comparison.pFloor)}, n = ${comparison.n}`;
  return `${verdict} (${statistics})`;
}

/** The finding for a row: the comparison(s) against the first model, or the single model's estimate. */
export function findingSentence(row: ReportRow): string {
  if (row.comparisons.length === 0) {
    return row.cells.map((cell) => `${cell.model}: ${formatValue(cell.mean)} (95% CI ${formatInterval(cell.low, cell.high)}, n = ${cell.n})`).join("; ");
  }
  if (row.comparisons.length === 1) {
    const comparison = row.comparisons[0] as ReportComparison;
    return `${comparison.treatment} vs ${comparison.baseline}: ${comparisonSentence(comparison)}`;
  }
  return row.comparisons.map((comparison) => `${comparison.treatment} vs ${comparison.baseline}: ${comparisonSentence(comparison)}`).join("; ");
}
