import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Report } from "../eval/report/index.ts";
import { firstRealArm, type Arm, type ArmKind, type PipelineConfig, type StageName } from "./config.ts";
import { EVIDENCE_FILE, type Evidence } from "./card.ts";
import type { ArmComparison } from "./evidence.ts";
import { floorSummary } from "./floors.ts";
import { summariseGrpo, type GrpoSummary } from "./grpo-signal.ts";
import { readStepLogs, readWatch, type WatchPoint } from "./watch.ts";

export type StageStatus = "done" | "resumed" | "skipped" | "failed" | "not run";

export interface StageRecord {
  name: StageName;
  status: StageStatus;
  seconds: number;
}

export type Comparison = ArmComparison;

export interface ArmSummary {
  name: string;
  kind: ArmKind;
  /** The model it started from: `pre` (the SFT model), the baseline's label, or `base`. */
  init: string;
  seed: number;
  /** null for arms trained on the environment's reward (and the baseline). */
  transform: Arm["transform"];
  curve: Array<{ step: number; mean: number; ci_low: number; ci_high: number }>;
  comparisons: Comparison[];
  /** The reward-hacking watch per training step (none for the baseline, which does not train with GRPO). */
  watch: WatchPoint[];
  /** Whether the watch warned: a signature's share rose while the reward rose and the outcome did not. */
  flagged: boolean;
  /** The signatures it warned about. */
  flagged_by: string[];
}

export interface PipelineSummary {
  preset: string;
  seconds: number;
  stages: StageRecord[];
  /** TRL's logged training metrics of the first arm that trains on the environment's reward. */
  grpo: GrpoSummary | null;
  /** That arm's comparisons with the pre model (p_holm: Holm across every arm's rows). */
  comparisons: Comparison[];
  arms: ArmSummary[];
  /** Every evaluated model's mean reward per suite row, with the benchmark's own summary (tau2: pass^k, protocol). */
  evaluation: ModelEvaluation[];
  /** The development seed (learning curves) and the test seed (the suite and sampled evaluations); null: the rows' own seeds. */
  eval_seeds: { dev: number; test: number } | null;
  /** Per suite row, the environment's do-nothing pilot and best-scoring pilot on the same tasks. */
  floors: ReturnType<typeof floorSummary>;
}

export interface ModelEvaluation {
  benchmark: string;
  model: string;
  /** Tasks with a reward. */
  n: number;
  /** null: not computed (e.g. tau2 NL assertions without a judge). */
  reward: { mean: number; ci_low: number; ci_high: number } | null;
  summary: Record<string, unknown> | null;
}

/** The models' results as the card stage's report has them (card/report.json); none before the card stage ran. */
function readEvaluation(out: string): ModelEvaluation[] {
  const path = join(out, "card", "report.json");
  if (!existsSync(path)) return [];
  const report = JSON.parse(readFileSync(path, "utf8")) as Report;
  return report.rows
    .filter((row) => row.metric === "reward")
    .flatMap((row) =>
      row.cells.map((cell) => ({
        benchmark: row.benchmark,
        model: cell.model,
        n: cell.n,
        reward: Number.isFinite(cell.mean) ? { mean: cell.mean, ci_low: cell.low, ci_high: cell.high } : null,
        summary: (row.summary?.models[cell.model] as Record<string, unknown> | undefined) ?? null,
      })),
    );
}

function readEvidence(out: string): Evidence | null {
  const path = join(out, EVIDENCE_FILE);
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Evidence) : null;
}

/** summary.json: the stages as run, the first real-reward arm's training and comparisons, and every arm's evidence. */
export function buildSummary(options: { config: PipelineConfig; out: string; stages: StageRecord[] }): PipelineSummary {
  const first = firstRealArm(options.config);
  const steps = first ? readStepLogs(options.out, first.name) : [];
  const evidence = readEvidence(options.out);
  const arms = (evidence?.arms ?? []).map((arm): ArmSummary => ({
    name: arm.name,
    kind: arm.kind,
    init: arm.init,
    seed: arm.seed,
    transform: arm.transform,
    curve: arm.curve.map((point) => ({ step: point.step, mean: point.mean, ci_low: point.ci_low, ci_high: point.ci_high })),
    comparisons: arm.comparisons,
    ...(arm.kind === "baseline" ? { watch: [], flagged: false, flagged_by: [] } : readWatch(readStepLogs(options.out, arm.name))),
  }));
  return {
    preset: options.config.preset,
    seconds: Math.round(options.stages.reduce((sum, stage) => sum + stage.seconds, 0) * 10) / 10,
    stages: options.stages,
    grpo: steps.length > 0 ? summariseGrpo(steps) : null,
    comparisons: arms.find((arm) => arm.name === first?.name)?.comparisons ?? [],
    arms,
    evaluation: readEvaluation(options.out),
    eval_seeds: options.config.eval.seeds ?? null,
    floors: floorSummary(evidence?.floors ?? []),
  };
}
