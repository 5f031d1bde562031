import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { getEnvironment } from "../src/envs/registry.ts";
import { runEvaluation } from "../src/eval/run-evaluation.ts";
import { passAtK } from "../src/eval/statistics.ts";
import { armKind, parsePipelineConfig } from "../src/pipeline/config.ts";
import { presetConfig } from "../src/pipeline/presets.ts";

const work = mkdtempSync(join(tmpdir(), "toolgym-pipeline-evidence-"));
after(() => rmSync(work, { recursive: true, force: true }));
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe("pass@k", () => {
  it("is Chen et al.'s unbiased estimator 1 - C(n-c, k) / C(n, k)", () => {
    assert.equal(passAtK(4, 1, 1), 0.25);
    assert.equal(passAtK(4, 1, 4), 1);
    assert.equal(passAtK(5, 0, 3), 0);
    assert.ok(Math.abs(passAtK(10, 3, 2) - (1 - 21 / 45)) < 1e-12);
    assert.throws(() => passAtK(2, 1, 3), /needs at least 3 samples/);
  });
});

describe("search_plan_act failure categories", () => {
  it("classify real episodes: the collateral teacher's unrequested write, none for the oracle's", async () => {
    const env = getEnvironment("search_plan_act");
    const config = presetConfig("tiny").envConfig;
    const out = join(work, "runs");
    for (const policy of ["oracle", "oracle_plus_collateral"])
      await runEvaluation({
        rows: [{ env, config: env.configSchema.parse(config), split: "eval", seed: 0, n: 6 }],
        models: [{ kind: "scripted", policy }],
        out,
        quiet: true,
      });
    const categories = (policy: string) => {
      const parent = join(out, `search_plan_act--scripted-${policy}`);
      const results = readFileSync(join(parent, readdirSync(parent)[0]!, "results.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Json);
      return results.map((result) =>
        env.failures!.classify({
          metrics: result.metrics,
          diagnostics: result.info.trajectory.diagnostics,
          termination: result.termination,
          formatErrors: result.format_errors,
        }),
      );
    };
    assert.deepEqual(
      categories("oracle"),
      Array.from({ length: 6 }, () => []),
    );
    for (const found of categories("oracle_plus_collateral")) assert.deepEqual(found, ["collateral write"]);
    const base = {
      metrics: { outcome: 0, stop: 1, collateralMutations: 0, repeatedCalls: 0 },
      diagnostics: { finishStatus: "done" },
      termination: "finished",
      formatErrors: 0,
    };
    assert.deepEqual(env.failures!.classify(base), ["wrong arguments"], "finished right after a wrong write");
    assert.deepEqual(
      env.failures!.classify({
        ...base,
        metrics: { ...base.metrics, stop: 0 },
        diagnostics: { finishStatus: null },
        termination: "max_turns",
        formatErrors: 2,
      }),
      ["malformed call", "runaway repetition", "wrong finish"],
    );
  });
});

describe("pipeline config: arms", () => {
  const tiny = presetConfig("tiny");
  const invalid = (change: (config: Json) => void) => {
    const config = structuredClone(tiny) as Json;
    change(config);
    return () => parsePipelineConfig(config, "test.yaml");
  };

  it("the tiny preset: two seeds on the real reward, the shuffled control, the filtered-SFT baseline, a curve and sampled eval", () => {
    assert.deepEqual(
      tiny.grpo?.arms.map((arm) => [arm.name, arm.seed, arm.transform]),
      [
        ["grpo-s0", 0, null],
        ["grpo-s1", 1, null],
        ["shuffled", 0, "shuffle_within_group"],
        ["exploit", 0, null],
      ],
    );
    // The reward-hacking watch's positive control: the exploitable reward variant, an arm of kind "exploit"
    assert.deepEqual(tiny.grpo?.arms[3]?.envConfig, { reward: "without_outcome" });
    assert.deepEqual(tiny.grpo?.arms.map(armKind), ["grpo", "grpo", "control", "exploit"]);
    assert.deepEqual(tiny.grpo?.curve, { every: 50, benchmark: "search_plan_act", n: 50 });
    assert.equal(tiny.baseline?.minReward, 0.9);
    assert.deepEqual(tiny.sampled, { benchmarks: ["search_plan_act"], n: 50, samples: 4, temperature: 1 });
  });

  it("refuses what would make the evidence ambiguous, naming the field", () => {
    assert.throws(
      invalid((config) => config.grpo.arms.push({ name: "grpo-s0", seed: 4 })),
      /field 'grpo\.arms': the name 'grpo-s0' is used twice/,
    );
    assert.throws(
      invalid((config) => (config.grpo.arms = [{ name: "c", transform: "constant" }])),
      /at least one arm must train on the environment's reward/,
    );
    assert.throws(
      invalid((config) => (config.grpo.flags.seed = 3)),
      /field 'grpo\.flags\.seed': the pipeline sets --seed for each arm/,
    );
    assert.throws(
      invalid((config) => (config.grpo.curve.every = 150)),
      /a curve needs 'grpo\.flags\.max-steps' greater than 'every'/,
    );
    assert.throws(
      invalid((config) => (config.sampled.benchmarks = ["nope"])),
      /field 'sampled\.benchmarks': 'nope' is not a row of eval\.suite/,
    );
    assert.throws(
      invalid((config) => (config.grpo.arms[2].transform = "reversed")),
      /field 'grpo\.arms\.2\.transform'/,
    );
    assert.throws(
      invalid((config) => (config.baseline.name = "pre")),
      /is used twice or is 'pre'/,
    );
  });
});
