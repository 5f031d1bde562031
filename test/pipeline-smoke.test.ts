import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { stringify as toYaml } from "yaml";
import { holmAdjust } from "../src/statistics/statistics.ts";
import { presetConfig } from "../src/pipeline/presets.ts";
import { requirePython } from "./support/qwen3.ts";

/**
 * The smoke preset end to end: every stage for real (a tiny Qwen3 with the real tokenizer, train_sft.py,
 * transformers serve, toolgym serve + TRL GRPOTrainer(environment_factory=…), the report library), killed
 * in the middle of GRPO and resumed: the finished stages are skipped and the card and summary come out.
 */
const ROOT = resolve(import.meta.dirname, "..");
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function pipeline(args: string[], options: { detached?: boolean; onStderr?: (text: string) => void } = {}) {
  requirePython();
  const child = spawn(process.execPath, [join(ROOT, "bin/toolgym.js"), "pipeline", ...args], {
    cwd: ROOT,
    detached: options.detached ?? false,
    env: { ...process.env, OMP_NUM_THREADS: "2" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    options.onStderr?.(stderr);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once("close", (code, signal) => done({ code, signal })));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

describe("toolgym pipeline --preset smoke", () => {
  const work = mkdtempSync(join(tmpdir(), "toolgym-pipeline-smoke-"));
  after(() => rmSync(work, { recursive: true, force: true }));

  it("runs every stage, survives a kill during grpo with --resume, and writes the card and summary.json", { timeout: 40 * 60_000 }, async () => {
    const out = join(work, "run");
    // First run: killed (with its whole process group, TRL included) once GRPO has started.
    let killed = false;
    const first = pipeline(["--preset", "smoke", "--out", out, "--quiet"], {
      detached: true,
      onStderr: (text) => {
        if (!killed && text.includes("grpo: grpo: python/train_grpo.py")) {
          killed = true;
          setTimeout(() => process.kill(-first.child.pid!, "SIGKILL"), 3000);
        }
      },
    });
    const ended = await first.exited;
    assert.ok(killed, `the first run reached grpo: ${first.output().stderr.slice(-2000)}`);
    assert.equal(ended.signal, "SIGKILL");
    for (const stage of ["data", "sft", "baseline", "eval-pre"]) assert.ok(existsSync(join(out, stage, "done.json")), `${stage} finished before the kill`);
    assert.equal(existsSync(join(out, "grpo", "done.json")), false, "grpo did not finish");

    const refused = pipeline(["--preset", "smoke", "--out", out, "--quiet"]);
    const refusedEnd = await refused.exited;
    assert.equal(refusedEnd.code, 2, "an existing run is never overwritten without --resume");
    assert.match(refused.output().stderr, /\[PIPELINE_EXISTS\]/);

    const second = pipeline(["--preset", "smoke", "--out", out, "--resume", "--quiet"]);
    const secondEnd = await second.exited;
    const { stdout, stderr } = second.output();
    assert.equal(secondEnd.code, 0, stderr.slice(-3000));
    for (const stage of ["data", "sft", "baseline", "eval-pre"])
      assert.match(stderr, new RegExp(`\\[pipeline\\] ${stage}: already complete, skipped \\(--resume\\)`));
    assert.match(stdout, /pipeline smoke finished/);

    // Artefacts of every stage.
    for (const file of [
      "pipeline.json",
      "data/base-model/model.safetensors",
      "data/sft.jsonl",
      "data/sft.jsonl.report.json",
      "data/prompts.parquet",
      "data/log.txt",
      "sft/model/model.safetensors",
      "sft/model/chat_template.jinja",
      "sft/model/log_history.json",
      "sft/log.txt",
      "data/sft-baseline.jsonl",
      "baseline/model/model.safetensors",
      "eval-pre/suite.json",
      "eval-pre/log.txt",
      "grpo/grpo/model/model.safetensors",
      "grpo/grpo/model/adapter/adapter_model.safetensors",
      "grpo/grpo/model/log_history.json",
      "grpo/grpo/model/curve/step-1/model.safetensors",
      "grpo/grpo/steps.jsonl",
      "grpo/shuffled/model/model.safetensors",
      "grpo/shuffled/model/curve/step-1/model.safetensors",
      "grpo/shuffled/steps.jsonl",
      "eval-post/suite.json",
      "card/report.json",
      "card/evidence.json",
      "card.md",
      "curves.svg",
      "report.html",
      "summary.json",
    ])
      assert.ok(existsSync(join(out, file)), `${file} written`);
    const rows = readFileSync(join(out, "data/sft.jsonl"), "utf8").trim().split("\n");
    assert.ok(rows.length >= 4, "SFT rows from the oracle and noisy-oracle trajectories");
    const sftLog = JSON.parse(readFileSync(join(out, "sft/model/log_history.json"), "utf8")) as Json[];
    assert.ok(
      sftLog.some((entry) => typeof entry.loss === "number"),
      "train_sft.py logged a loss",
    );
    for (const [stage, label] of [
      ["eval-pre", "pre"],
      ["eval-post", "grpo"],
      ["eval-post", "shuffled"],
      ["eval-post", "filtered-sft"],
    ] as const) {
      const parent = join(out, stage, "runs", label, `search_plan_act--${label}`);
      const [run] = readdirSync(parent);
      const results = readFileSync(join(parent, run as string, "results.jsonl"), "utf8")
        .trim()
        .split("\n");
      assert.equal(results.length, 2, `${label}: one episode per task of the suite`);
    }
    const sampledParent = join(out, "eval-pre", "sampled", "pre", "search_plan_act--pre");
    const sampled = readFileSync(join(sampledParent, readdirSync(sampledParent)[0] as string, "results.jsonl"), "utf8")
      .trim()
      .split("\n");
    assert.equal(sampled.length, 4, "sampled: 2 tasks x 2 samples");
    assert.match(readFileSync(join(out, "grpo/log.txt"), "utf8"), /train_grpo\.py .*--server-url http:\/\/127\.0\.0\.1:\d+/);

    // The card: one row per suite metric, a pre and a post column.
    const card = readFileSync(join(out, "card.md"), "utf8");
    assert.match(card, /\| Benchmark \| Metric \| n \| pre \| grpo \| shuffled \| filtered-sft \| Finding \|/);
    assert.match(card, /\| search_plan_act \| mean reward \| 2 \|/);
    assert.match(card, /\| search_plan_act \| outcome \| 2 \|/);

    // summary.json's shape.
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Json;
    assert.deepEqual(Object.keys(summary), ["preset", "seconds", "stages", "grpo", "comparisons", "arms", "evaluation", "eval_seeds", "floors"]);
    assert.deepEqual(summary.eval_seeds, { dev: 0, test: 1 });
    assert.deepEqual(
      summary.floors.map((floor: Json) => [floor.benchmark, floor.policy, floor.role]).filter((floor: string[]) => floor[2] === "do-nothing"),
      [["search_plan_act", "always_impossible", "do-nothing"]],
    );
    assert.equal(summary.preset, "smoke");
    assert.equal(typeof summary.seconds, "number");
    assert.deepEqual(
      summary.stages.map((stage: Json) => [stage.name, stage.status]),
      [
        ["data", "resumed"],
        ["sft", "resumed"],
        ["baseline", "resumed"],
        ["eval-pre", "resumed"],
        ["grpo", "done"],
        ["eval-post", "done"],
        ["card", "done"],
      ],
    );
    for (const stage of summary.stages) assert.ok(stage.name === "card" ? stage.seconds >= 0 : stage.seconds > 0, `${stage.name} took time`);
    assert.deepEqual(Object.keys(summary.grpo), ["steps", "reward_first", "reward_last", "frac_reward_zero_std_mean", "tool_calls_per_completion"]);
    assert.equal(summary.grpo.steps, 2);
    const logged = (JSON.parse(readFileSync(join(out, "grpo/grpo/model/log_history.json"), "utf8")) as Json[]).filter(
      (entry) => typeof entry.reward === "number",
    );
    assert.equal(summary.grpo.reward_first, logged[0]?.reward, "the first step's reward as TRL logged it");
    assert.equal(summary.grpo.reward_last, logged.at(-1)?.reward);
    assert.ok(summary.comparisons.length >= 2, "reward and outcome rows");
    for (const comparison of summary.comparisons) {
      assert.deepEqual(Object.keys(comparison), ["benchmark", "metric", "against", "n", "pre", "post", "delta", "p", "p_holm"]);
      assert.deepEqual(Object.keys(comparison.pre), ["mean", "ci_low", "ci_high"]);
      assert.equal(comparison.benchmark, "search_plan_act");
      assert.ok(Math.abs(comparison.delta - (comparison.post.mean - comparison.pre.mean)) < 1e-9, "paired over the same tasks");
      assert.ok(comparison.p_holm >= comparison.p);
    }

    // Arms: kinds, seeds, transforms; every GRPO arm (the control included) has a curve of 3 points; Holm across all arms.
    assert.deepEqual(
      summary.arms.map((arm: Json) => [arm.name, arm.kind, arm.init, arm.seed, arm.transform, arm.curve.map((point: Json) => point.step)]),
      [
        ["grpo", "grpo", "pre", 0, null, [0, 1, 2]],
        ["shuffled", "control", "pre", 0, "shuffle_within_group", [0, 1, 2]],
        ["filtered-sft", "baseline", "base", 0, null, []],
      ],
    );
    const pairs = { grpo: ["pre", "filtered-sft", "shuffled"], shuffled: ["pre"], "filtered-sft": ["pre"] } as Record<string, string[]>;
    for (const arm of summary.arms) {
      assert.deepEqual(Object.keys(arm), ["name", "kind", "init", "seed", "transform", "curve", "comparisons", "watch", "flagged", "flagged_by"]);
      for (const point of arm.curve) assert.deepEqual(Object.keys(point), ["step", "mean", "ci_low", "ci_high"]);
      assert.deepEqual(
        arm.comparisons.map((comparison: Json) => [comparison.against, comparison.benchmark, comparison.metric]),
        (pairs[arm.name] ?? []).flatMap((against) => [
          [against, "search_plan_act", "reward"],
          [against, "search_plan_act", "outcome"],
        ]),
      );
    }
    const family = summary.arms.flatMap((arm: Json) => arm.comparisons);
    assert.deepEqual(
      family.map((comparison: Json) => comparison.p_holm),
      holmAdjust(family.map((comparison: Json) => comparison.p)),
      "Holm over the 10 rows of the whole family together",
    );
    assert.deepEqual(summary.comparisons, summary.arms[0].comparisons, "the top-level comparisons are the first real-reward arm's");
    const preCurve = summary.arms[0].curve[0];
    assert.deepEqual(summary.arms[1].curve[0], preCurve, "both arms start from the same SFT model point");

    // The control's reward reached TRL permuted: its own reward column, with the untransformed batch mean logged beside it.
    const shuffledLog = (JSON.parse(readFileSync(join(out, "grpo/shuffled/model/log_history.json"), "utf8")) as Json[]).filter(
      (entry) => typeof entry.reward === "number",
    );
    assert.equal(shuffledLog.length, 2);
    for (const entry of shuffledLog) {
      assert.equal(typeof entry["rewards/reward_shuffle_within_group/mean"], "number", JSON.stringify(entry));
      assert.ok(Math.abs(entry.reward - entry["toolgym/env_reward"]) < 1e-6, "a permutation keeps the batch mean");
    }
    assert.equal(logged[0]?.["rewards/reward_shuffle_within_group/mean"], undefined, "the real-reward arm trains on the environment's own reward");
    // A curve checkpoint is the output layout with the template evaluations serve (not TRL's training one).
    assert.equal(
      readFileSync(join(out, "grpo/grpo/model/curve/step-1/chat_template.jinja"), "utf8"),
      readFileSync(join(out, "grpo/grpo/model/chat_template.jinja"), "utf8"),
    );

    // The card: named by its path inside --out; arms, curves, failure categories and sampled evaluation.
    assert.match(card, /^---\n[\s\S]*?\n---\n\n# grpo\/grpo\/model \(toolgym pipeline, preset smoke\)\n/);
    assert.ok(!card.includes(work), "no path of this machine's temporary directory in the card");
    assert.match(
      card,
      /## Arms\n[\s\S]*- \*\*shuffled\*\* \(control, shuffle_within_group, seed 0, from `pre`\): not significantly different from `pre` on search_plan_act/,
    );
    assert.match(card, /## Learning curves\n[\s\S]*!\[learning curves\]\(curves\.svg\)\n\n\| Arm \| step \| mean reward \[95% CI\] \|/);
    assert.match(card, /\| shuffled \| 2 \| \d\.\d{3} \[/);
    assert.match(
      card,
      /## What changed: failure categories[\s\S]*\| Failure \(episodes\) \| pre \(n=2\) \| grpo \(n=2\) \| shuffled \(n=2\) \| filtered-sft \(n=2\) \|\n\|---\|---\|---\|---\|---\|\n\| collateral write \|/,
    );
    assert.match(card, /## Sampled evaluation[\s\S]*\| search_plan_act \| pre \| 2 × 2 \(T=1\) \|/);
    assert.match(card, /## Floors\n[\s\S]*\| search_plan_act \| 2 \| 0\.000 \(always_impossible\) \|/);
    // The evidence pack: every eval run's episodes, gzipped, beside the stage logs
    assert.ok(existsSync(join(out, "evidence/eval-pre/log.txt.gz")) && existsSync(join(out, "evidence/grpo/grpo/steps.jsonl.gz")));
    const svg = readFileSync(join(out, "curves.svg"), "utf8");
    assert.deepEqual(
      [...svg.matchAll(/<polyline class="curve" data-arm="([^"]+)"/g)].map((match) => match[1]),
      ["grpo", "shuffled"],
    );
    assert.match(readFileSync(join(out, "report.html"), "utf8"), /<section id="learning-curves"><h2>Learning curves<\/h2><svg /);

    // The dry run is what ran: every stage's executed commands equal its dry-run lines, ports aside.
    const dry = pipeline(["--preset", "smoke", "--out", out, "--dry-run"]);
    assert.equal((await dry.exited).code, 0);
    const ports = (line: string) => line.replace(/(127\.0\.0\.1:|--port )(\d+|PORT|SERVER_PORT)\b/g, "$1N");
    const planned = new Map<string, string[]>();
    let current = "";
    for (const line of dry.output().stdout.split("\n")) {
      const heading = /^## (\S+)/.exec(line);
      if (heading) planned.set((current = heading[1] as string), []);
      else if (line.startsWith("$ ")) planned.get(current)?.push(ports(line.slice(2)));
    }
    for (const stage of ["data", "sft", "baseline", "eval-pre", "grpo", "eval-post", "card"]) {
      const file = join(out, stage, "commands.txt");
      const executed = existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map(ports) : [];
      assert.deepEqual(executed, planned.get(stage), `${stage}: executed = dry run`);
    }
    assert.ok(
      (planned.get("eval-pre") ?? []).some((line) => line.includes("--max-retries 1")),
      "the eval's retry setting is in the plan",
    );
  });

  it("stops GRPO with GRPO_NO_SIGNAL when TRL logs only zero-variance groups (the random smoke model earns no reward)", { timeout: 20 * 60_000 }, async () => {
    const previous = join(work, "run");
    assert.ok(existsSync(join(previous, "sft", "done.json")), "the first test left its data and sft stages");
    const out = join(work, "no-signal");
    for (const stage of ["data", "sft"]) cpSync(join(previous, stage), join(out, stage), { recursive: true });
    const config = { ...presetConfig("smoke"), grpo: { ...presetConfig("smoke").grpo, noSignalSteps: 1 } };
    const file = join(work, "no-signal.yaml");
    writeFileSync(file, toYaml(config));
    const run = pipeline(["--config", file, "--out", out, "--only", "grpo", "--quiet"]);
    const end = await run.exited;
    const { stderr } = run.output();
    assert.equal(end.code, 1, stderr.slice(-2000));
    assert.match(stderr, /toolgym: GRPO got no learning signal: every group had zero reward variance in each of the first 1 steps .*\[GRPO_NO_SIGNAL\]/);
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Json;
    assert.deepEqual(
      summary.stages.map((stage: Json) => [stage.name, stage.status]),
      [
        ["data", "resumed"],
        ["sft", "resumed"],
        ["baseline", "not run"],
        ["eval-pre", "not run"],
        ["grpo", "failed"],
        ["eval-post", "not run"],
        ["card", "not run"],
      ],
    );
    assert.equal(summary.grpo.steps, 1, "stopped after the first logged step");
    assert.equal(summary.grpo.frac_reward_zero_std_mean, 1);
    assert.equal(existsSync(join(out, "grpo", "grpo", "model", "model.safetensors")), false, "no checkpoint from a run without signal");
  });
});
