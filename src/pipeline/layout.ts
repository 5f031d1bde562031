import { join } from "node:path";
import type { Arm, PipelineConfig } from "./config.ts";

/** The model each stage starts from and writes. */
export function modelPaths(config: PipelineConfig, out: string) {
  const base = config.base.kind === "model" ? config.base.model : join(out, "data", "base-model");
  const sft = join(out, "sft", "model");
  return {
    base,
    sft,
    pre: config.sft ? sft : base,
    arm: (name: string) => join(out, "grpo", name, "model"),
    checkpoint: (name: string, step: number) => join(out, "grpo", name, "model", "curve", `step-${step}`),
    baseline: join(out, "baseline", "model"),
  };
}

/** Checkpoint steps of the learning curve (the final model is the last point). */
export function curveSteps(config: PipelineConfig): number[] {
  const curve = config.grpo?.curve;
  if (!curve) return [];
  const last = Number(config.grpo?.flags["max-steps"]);
  const steps: number[] = [];
  for (let step = curve.every; step < last; step += curve.every) steps.push(step);
  return steps;
}

/** The models evaluated before GRPO (the SFT model `pre`, the base model `base`) go under eval-pre, the arms under eval-post. */
export const evalStageOf = (label: string): "eval-pre" | "eval-post" => (label === "pre" || label === "base" ? "eval-pre" : "eval-post");

/** Where the pipeline's evaluation runs go (each `toolgym eval --out DIR` then adds `<benchmark>--<label>/<run id>`). */
export function evidenceLayout(out: string) {
  return {
    /** The full suite for one model: eval-pre/runs/pre, eval-post/runs/<arm>. */
    suiteRuns: (stage: "eval-pre" | "eval-post", label: string) => join(out, stage, "runs", label),
    sampled: (stage: "eval-pre" | "eval-post", label: string) => join(out, stage, "sampled", label),
    /** A learning-curve point; the pre model's (step 0) is shared by every arm. */
    curve: (label: string, step: number) => join(out, evalStageOf(label), "curve", label, `step-${step}`),
    steps: (arm: string) => join(out, "grpo", arm, "steps.jsonl"),
    /** The environment's scripted pilots on one suite row's tasks (`<env>--scripted-<pilot>/<run id>` under it). */
    floors: (benchmark: string) => join(out, "eval-pre", "floors", benchmark),
  };
}

/** The label of the model an arm starts from (its step-0 curve point): the SFT model `pre`, or the baseline's. */
export function initLabel(config: PipelineConfig, arm: Pick<Arm, "init">): string {
  return arm.init === "baseline" && config.baseline ? config.baseline.name : "pre";
}
