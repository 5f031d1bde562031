import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Report } from "../eval/report/index.ts";
import type { StageName } from "./config.ts";
import { summariseGrpo, type GrpoSummary, type StepLog } from "./grpo-signal.ts";
import { GRPO_STEPS_FILE } from "./stages.ts";

export type StageStatus = "done" | "resumed" | "skipped" | "failed" | "not run";

export interface StageRecord {
  name: StageName;
  status: StageStatus;
  seconds: number;
}

interface Interval {
  mean: number;
  ci_low: number;
  ci_high: number;
}

export interface Comparison {
  benchmark: string;
  metric: string;
  n: number;
  pre: Interval;
  post: Interval;
  delta: number;
  p: number;
  p_holm: number;
}

export interface PipelineSummary {
  preset: string;
  seconds: number;
  stages: StageRecord[];
  grpo: GrpoSummary | null;
  comparisons: Comparison[];
}

function readSteps(out: string): StepLog[] {
  const path = join(out, "grpo", GRPO_STEPS_FILE);
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as StepLog);
}

/** One comparison per report row that has both a `pre` and a `post` cell and their paired test. */
export function comparisonsOf(report: Report): Comparison[] {
  return report.rows.flatMap((row): Comparison[] => {
    const pre = row.cells.find((cell) => cell.model === "pre");
    const post = row.cells.find((cell) => cell.model === "post");
    const paired = row.comparisons.find((comparison) => comparison.baseline === "pre" && comparison.treatment === "post");
    if (row.status !== "ok" || !pre || !post || !paired) return [];
    return [
      {
        benchmark: row.benchmark,
        metric: row.metric,
        n: paired.n,
        pre: { mean: pre.mean, ci_low: pre.low, ci_high: pre.high },
        post: { mean: post.mean, ci_low: post.low, ci_high: post.high },
        delta: paired.delta,
        p: paired.pValue,
        p_holm: paired.pHolm,
      },
    ];
  });
}

/** summary.json: the stages as run, GRPO's curves in numbers, and the pre/post comparisons of the card. */
export function buildSummary(options: { preset: string; out: string; stages: StageRecord[]; report: Report | null }): PipelineSummary {
  const steps = readSteps(options.out);
  return {
    preset: options.preset,
    seconds: Math.round(options.stages.reduce((sum, stage) => sum + stage.seconds, 0) * 10) / 10,
    stages: options.stages,
    grpo: steps.length > 0 ? summariseGrpo(steps) : null,
    comparisons: options.report ? comparisonsOf(options.report) : [],
  };
}
