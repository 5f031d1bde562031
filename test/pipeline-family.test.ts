import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { getEnvironment } from "../src/envs/registry.ts";
import { runEvaluation } from "../src/eval/run-evaluation.ts";
import { holmAdjust } from "../src/statistics/statistics.ts";
import { writeEvidence } from "../src/pipeline/card.ts";
import { parsePipelineConfig, type PipelineConfig } from "../src/pipeline/config.ts";
import { evidenceLayout } from "../src/pipeline/layout.ts";
import { EVIDENCE_DIR, unpackEvidence } from "../src/pipeline/pack.ts";
import { presetConfig } from "../src/pipeline/presets.ts";
import { buildSummary } from "../src/pipeline/summary.ts";

/**
 * The card stage's evidence over real episodes with non-zero, varied rewards: the search_plan_act scripted
 * policies stand in for the models (a noisier oracle for a worse model), so the step-0 points, the family of
 * paired comparisons, the floors and the pack are checked on data where a wrong pairing or seed would show.
 */
const work = mkdtempSync(join(tmpdir(), "toolgym-pipeline-family-"));
after(() => rmSync(work, { recursive: true, force: true }));
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const TASKS = 30;
const CURVE_TASKS = 12;
const tiny = presetConfig("tiny");
const row = tiny.eval.suite as Array<Json>;
const config: PipelineConfig = parsePipelineConfig(
  {
    ...tiny,
    eval: { ...tiny.eval, suite: [{ ...row[0], n: TASKS }] },
    grpo: { ...tiny.grpo, arms: tiny.grpo!.arms.filter((arm) => arm.name !== "exploit"), curve: { every: 50, benchmark: "search_plan_act", n: CURVE_TASKS } },
    sampled: undefined,
  },
  "family test",
);

/** Which scripted policy plays each model (worse models: more noise). */
const PLAYS: Record<string, string> = {
  pre: "noisy_oracle_0.6",
  "grpo-s0": "noisy_oracle_0.1",
  "grpo-s1": "oracle",
  shuffled: "noisy_oracle_0.6",
  "grpo-from-filtered": "noisy_oracle_0.1",
  "filtered-sft": "noisy_oracle_0.3",
};
const PILOTS = ["always_impossible", "oracle_plus_collateral", "reckless_guess"];

const env = getEnvironment("search_plan_act");
const envConfig = env.configSchema.parse(tiny.envConfig);
const seeds = tiny.eval.seeds!;
const out = join(work, "run");
const layout = evidenceLayout(out);

async function play(policy: string, label: string, options: { seed: number; n: number; out: string }) {
  await runEvaluation({
    rows: [
      { env, config: envConfig, split: "eval", seed: options.seed, n: options.n, maxTurns: 4, benchmark: "search_plan_act", metrics: ["reward", "outcome"] },
    ],
    models: [{ kind: "scripted", label, policy }],
    out: options.out,
    quiet: true,
  });
}

/** The rewards of a run directory's results.jsonl by task, read as plain JSON (not through the code under test). */
function rewardsIn(directory: string): Map<string, number> {
  const [parent] = readdirSync(directory);
  const [run] = readdirSync(join(directory, parent as string));
  const lines = readFileSync(join(directory, parent as string, run as string, "results.jsonl"), "utf8")
    .trim()
    .split("\n");
  return new Map(lines.map((line) => JSON.parse(line) as Json).map((result) => [String(result.example_id), result.reward as number]));
}
const average = (values: Iterable<number>) => {
  const list = [...values];
  return list.reduce((sum, value) => sum + value, 0) / list.length;
};

before(async () => {
  for (const [label, policy] of Object.entries(PLAYS)) {
    const stage = label === "pre" ? "eval-pre" : "eval-post";
    await play(policy, label, { seed: seeds.test, n: TASKS, out: layout.suiteRuns(stage, label) });
    if (label === "pre" || label === "filtered-sft") await play(policy, label, { seed: seeds.dev, n: CURVE_TASKS, out: layout.curve(label, 0) });
    else for (const step of [50, 100, 150]) await play(policy, label, { seed: seeds.dev, n: CURVE_TASKS, out: layout.curve(label, step) });
  }
  for (const pilot of PILOTS) await play(pilot, `scripted-${pilot}`, { seed: seeds.test, n: TASKS, out: layout.floors("search_plan_act") });
  for (const stage of ["eval-pre", "eval-post"]) writeFileSync(join(out, stage, "done.json"), `${JSON.stringify({ seconds: 1.5 })}\n`);
  writeEvidence(config, out);
});

describe("the card stage's evidence on non-zero rewards", () => {
  it("arms that start from the same model show the same step-0 point; the filter-then-RL arm starts from the baseline's", () => {
    const evidence = JSON.parse(readFileSync(join(out, "card", "evidence.json"), "utf8")) as Json;
    const arm = (name: string) => evidence.arms.find((entry: Json) => entry.name === name);
    const start = arm("grpo-s0").curve[0];
    assert.equal(start.step, 0);
    const preRewards = rewardsIn(layout.curve("pre", 0));
    assert.ok(Math.abs(start.mean - average(preRewards.values())) < 1e-12, "step 0 is the pre model's mean on the curve's tasks");
    assert.ok(start.mean > 0 && start.ci_high > start.ci_low, `a non-zero point with a CI of width: ${JSON.stringify(start)}`);
    assert.deepEqual(arm("grpo-s1").curve[0], start, "same starting model: the same point, CI included");
    assert.deepEqual(arm("shuffled").curve[0], start);
    const filtered = arm("grpo-from-filtered").curve[0];
    assert.ok(Math.abs(filtered.mean - average(rewardsIn(layout.curve("filtered-sft", 0)).values())) < 1e-12);
    assert.deepEqual(
      evidence.arms.map((entry: Json) => [entry.name, entry.init, entry.curve.map((point: Json) => point.step)]),
      [
        ["grpo-s0", "pre", [0, 50, 100, 150]],
        ["grpo-s1", "pre", [0, 50, 100, 150]],
        ["shuffled", "pre", [0, 50, 100, 150]],
        ["grpo-from-filtered", "filtered-sft", [0, 50, 100, 150]],
        ["filtered-sft", "base", []],
      ],
    );
  });

  it("pairs every GRPO arm with pre, the baseline and the control on the same tasks, with Holm over the whole family", () => {
    const evidence = JSON.parse(readFileSync(join(out, "card", "evidence.json"), "utf8")) as Json;
    const against = (name: string) => [
      ...new Set(evidence.arms.find((entry: Json) => entry.name === name).comparisons.map((comparison: Json) => comparison.against)),
    ];
    for (const name of ["grpo-s0", "grpo-s1", "grpo-from-filtered"]) assert.deepEqual(against(name), ["pre", "filtered-sft", "shuffled"], name);
    assert.deepEqual(against("shuffled"), ["pre"]);
    assert.deepEqual(against("filtered-sft"), ["pre"]);
    const family = evidence.arms.flatMap((entry: Json) => entry.comparisons);
    assert.equal(family.length, (3 * 3 + 2) * 2, "11 pairs × (reward, outcome)");
    assert.deepEqual(
      family.map((comparison: Json) => comparison.p_holm),
      holmAdjust(family.map((comparison: Json) => comparison.p)),
    );
    // The paired difference, recomputed from the result files: grpo-from-filtered against its own starting model
    const arm = rewardsIn(layout.suiteRuns("eval-post", "grpo-from-filtered"));
    const baseline = rewardsIn(layout.suiteRuns("eval-post", "filtered-sft"));
    const row = family.find(
      (comparison: Json) => comparison.metric === "reward" && comparison.against === "filtered-sft" && comparison.post.mean === average(arm.values()),
    );
    assert.ok(row, "the arm's comparison with the baseline");
    assert.equal(row.n, TASKS);
    assert.ok(Math.abs(row.pre.mean - average(baseline.values())) < 1e-12, "`pre` holds the against model's mean");
    assert.ok(Math.abs(row.delta - average([...arm].map(([task, reward]) => reward - (baseline.get(task) as number)))) < 1e-12);
    assert.ok(row.delta > 0, "a less noisy oracle beats a noisier one on these tasks");
  });

  it("shows the floors: the do-nothing pilot and the best pilot on the same tasks, a model below them flagged", () => {
    const evidence = JSON.parse(readFileSync(join(out, "card", "evidence.json"), "utf8")) as Json;
    const [floor] = evidence.floors;
    const collateral = average(
      readFileSync(
        join(
          layout.floors("search_plan_act"),
          "search_plan_act--scripted-oracle_plus_collateral",
          readdirSync(join(layout.floors("search_plan_act"), "search_plan_act--scripted-oracle_plus_collateral"))[0] as string,
          "results.jsonl",
        ),
        "utf8",
      )
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as Json).reward as number),
    );
    assert.equal(floor.doNothing.policy, "always_impossible");
    assert.equal(floor.doNothing.mean, 0);
    assert.equal(floor.best.policy, "oracle_plus_collateral");
    assert.ok(Math.abs(floor.best.mean - collateral) < 1e-12 && collateral > 0.3, String(collateral));
    const card = readFileSync(join(out, "card.md"), "utf8");
    const line = card.split("\n").find((text) => text.startsWith("| search_plan_act | 30 | 0.000 (always_impossible) |")) ?? "";
    assert.ok(line, card);
    const pre = average(rewardsIn(layout.suiteRuns("eval-pre", "pre")).values());
    assert.equal(line.includes(`${pre.toFixed(3)} (below best pilot)`), pre < collateral, line);
    assert.ok(!line.includes("below do-nothing"), "nothing scores under 0");
    assert.match(card, /\*\*test seed 1\*\* for the suite and sampled evaluations .* \*\*development seed 0\*\* for the learning curves/);
    const summary = buildSummary({ config, out, stages: [] });
    assert.deepEqual(summary.eval_seeds, { dev: 0, test: 1 });
    assert.deepEqual(
      summary.floors.map((entry) => [entry.benchmark, entry.policy, entry.role]),
      [
        ["search_plan_act", "always_impossible", "do-nothing"],
        ["search_plan_act", "oracle_plus_collateral", "best pilot"],
      ],
    );
    assert.deepEqual(
      summary.arms.map((arm) => [arm.name, arm.init]),
      [
        ["grpo-s0", "pre"],
        ["grpo-s1", "pre"],
        ["shuffled", "pre"],
        ["grpo-from-filtered", "filtered-sft"],
        ["filtered-sft", "base"],
      ],
    );
    for (const comparison of summary.comparisons) assert.equal(typeof comparison.against, "string");
  });

  it("packs the evidence so that the card stage over the unpacked files renders the same card, byte for byte", () => {
    const again = join(work, "again");
    const files = unpackEvidence(join(out, EVIDENCE_DIR), again);
    assert.ok(
      files.some((file) => file.endsWith("results.jsonl")),
      "per-episode results travel",
    );
    assert.ok(files.includes("eval-pre/done.json"));
    writeEvidence(config, again);
    for (const file of ["card.md", "curves.svg", join("card", "evidence.json")])
      assert.equal(readFileSync(join(again, file), "utf8"), readFileSync(join(out, file), "utf8"), file);
    assert.ok(!readFileSync(join(again, "card.md"), "utf8").includes(work), "no path of this machine in the card");
  });
});
