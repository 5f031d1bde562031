import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { getEnvironment } from "../src/envs/registry.ts";
import { runEvaluation } from "../src/eval/run-evaluation.ts";
import { passAtK } from "../src/statistics/statistics.ts";
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

describe("the tiny preset's development and test seeds", () => {
  it("draw disjoint tasks: no test task's text is among the development seed's", async () => {
    const tiny = presetConfig("tiny");
    const env = getEnvironment("search_plan_act");
    const config = env.configSchema.parse(tiny.envConfig);
    const texts = async (seed: number) => {
      const out = join(work, `seed-${seed}`);
      await runEvaluation({
        rows: [{ env, config, split: "eval", seed, n: 200 }],
        models: [{ kind: "scripted", policy: "always_impossible" }],
        out,
        quiet: true,
      });
      const parent = join(out, "search_plan_act--scripted-always_impossible");
      return readFileSync(join(parent, readdirSync(parent)[0]!, "results.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as Json).prompt.find((message: Json) => message.role === "user").content as string);
    };
    const development = new Set(await texts(tiny.eval.seeds!.dev));
    const test = await texts(tiny.eval.seeds!.test);
    assert.equal(development.size, 200);
    assert.equal(new Set(test).size, 200);
    assert.deepEqual(
      test.filter((text) => development.has(text)),
      [],
    );
  });
});

describe("the tau2 preset's turn limits", () => {
  it("are tau2's own: the scripted oracle reaches 1.0 on the retail test tasks the card evaluates", async () => {
    const preset = presetConfig("tau2");
    assert.equal(preset.eval.maxTurns, undefined, "no cap of the pipeline's own (an 8-turn cap held the oracle under 1.0)");
    // Retail: the domain whose longer conversations the old 8-turn cap cut (the oracle scored 0.800 under it)
    for (const row of (preset.eval.suite as Json[]).filter((entry) => entry.env === "tau2_retail")) {
      const env = getEnvironment(row.env);
      const out = join(work, `tau2-${row.env}`);
      const config = env.configSchema.parse(row.config);
      await runEvaluation({
        rows: [{ env, config, split: row.split, seed: row.seed, n: row.n }],
        models: [{ kind: "scripted", policy: "oracle" }],
        out,
        quiet: true,
      });
      const parent = join(out, `${row.env}--scripted-oracle`);
      const rewards = readFileSync(join(parent, readdirSync(parent)[0]!, "results.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as Json).reward as number);
      assert.deepEqual(
        rewards,
        rewards.map(() => 1),
        row.env,
      );
    }
  });
});

describe("pipeline config: arms", () => {
  const tiny = presetConfig("tiny");
  const invalid = (change: (config: Json) => void) => {
    const config = structuredClone(tiny) as Json;
    change(config);
    return () => parsePipelineConfig(config, "test.yaml");
  };

  it("the tiny preset: two seeds on the real reward, the shuffled control, GRPO from the filtered-SFT model, the baseline, a curve and sampled eval", () => {
    assert.deepEqual(
      tiny.grpo?.arms.filter((arm) => arm.name !== "exploit").map((arm) => [arm.name, arm.seed, arm.transform, arm.init]),
      [
        ["grpo-s0", 0, null, "pre"],
        ["grpo-s1", 1, null, "pre"],
        ["shuffled", 0, "shuffle_within_group", "pre"],
        ["grpo-from-filtered", 0, null, "baseline"],
      ],
    );
    assert.deepEqual(tiny.eval.seeds, { dev: 0, test: 1 }, "curves on the development seed, the final comparison on a fresh one");
    // The reward-hacking watch's positive control: the exploitable reward variant, an arm of kind "exploit"
    assert.deepEqual(tiny.grpo?.arms[4]?.envConfig, { reward: "without_outcome" });
    assert.deepEqual(tiny.grpo?.arms.map(armKind), ["grpo", "grpo", "control", "grpo", "exploit"]);
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
    assert.throws(
      invalid((config) => (config.eval.seeds = { dev: 3, test: 3 })),
      /field 'eval\.seeds': the test seed must differ from the development seed/,
    );
    assert.throws(
      invalid((config) => delete config.baseline),
      /field 'grpo\.arms\.init': 'baseline' starts GRPO from the filtered-SFT model; add a `baseline`/,
    );
  });
});
