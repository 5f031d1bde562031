import { existsSync } from "node:fs";
import { buildReport, loadInputs, type Report } from "../eval/report/index.ts";
import { holmAdjust } from "../statistics/statistics.ts";
import type { ArmComparison, ArmEvidence } from "./evidence.ts";
import { evalStageOf, evidenceLayout } from "./layout.ts";

type Listed = Pick<ArmEvidence, "name" | "kind">;

/**
 * Whom each kind of model is compared with, on the same tasks: every arm with the SFT model `pre`; an arm
 * trained on the environment's reward also with the filtered-SFT baseline (does RL add anything beyond filtering
 * the demonstrations?) and with every control (is the gain the reward's doing?). A kind not listed is compared
 * with `pre` only.
 */
export const COMPARED_WITH: Record<string, (arms: readonly Listed[]) => string[]> = {
  grpo: (arms) => ["pre", ...["baseline", "control"].flatMap((kind) => arms.filter((arm) => arm.kind === kind).map((arm) => arm.name))],
};

/** The labels `arm` is paired with, in order. */
export function comparedWith(arm: Listed, arms: readonly Listed[]): string[] {
  return (COMPARED_WITH[arm.kind] ?? (() => ["pre"]))(arms);
}

/**
 * Every arm's paired comparisons with the models `comparedWith` names, one report per compared-with model (its
 * runs first, so the report's paired test — bootstrap, or McNemar on pass/fail — is the one every card uses), with
 * Holm's adjustment across the whole family: every arm, every compared-with model, every benchmark and metric.
 */
export function familyComparisons(out: string, arms: readonly Listed[]): Map<string, ArmComparison[]> {
  const layout = evidenceLayout(out);
  const path = (label: string) => layout.suiteRuns(evalStageOf(label), label);
  const pairs = arms.flatMap((arm) => comparedWith(arm, arms).map((against) => ({ arm: arm.name, against })));
  const reports = new Map<string, Report>();
  for (const against of new Set(pairs.map((pair) => pair.against))) {
    const treatments = [...new Set(pairs.filter((pair) => pair.against === against).map((pair) => pair.arm))];
    const paths = [against, ...treatments].map(path).filter((directory) => existsSync(directory));
    if (existsSync(path(against))) reports.set(against, buildReport(loadInputs(paths)));
  }
  const found = arms.map((arm) =>
    comparedWith(arm, arms).flatMap((against) => {
      const report = reports.get(against);
      return (report?.rows ?? []).flatMap((row): ArmComparison[] => {
        const before = row.cells.find((cell) => cell.model === against);
        const after = row.cells.find((cell) => cell.model === arm.name);
        const paired = row.comparisons.find((comparison) => comparison.baseline === against && comparison.treatment === arm.name);
        if (row.status !== "ok" || !before || !after || !paired) return [];
        const pre = { mean: before.mean, ci_low: before.low, ci_high: before.high };
        const post = { mean: after.mean, ci_low: after.low, ci_high: after.high };
        return [{ benchmark: row.benchmark, metric: row.metric, against, n: paired.n, pre, post, delta: paired.delta, p: paired.pValue, p_holm: Number.NaN }];
      });
    }),
  );
  const adjusted = holmAdjust(found.flat().map((comparison) => comparison.p));
  let index = 0;
  for (const list of found) for (const comparison of list) comparison.p_holm = adjusted[index++] as number;
  return new Map(arms.map((arm, position) => [arm.name, found[position] as ArmComparison[]]));
}

/** The number of hypotheses in the family (the m of Holm's adjustment). */
export const familySize = (arms: readonly Pick<ArmEvidence, "comparisons">[]) =>
  arms.flatMap((arm) => arm.comparisons).filter((comparison) => Number.isFinite(comparison.p)).length;
