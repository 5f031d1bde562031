import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { stringify as toYaml } from "yaml";
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
        if (!killed && text.includes("grpo: toolgym serve on")) {
          killed = true;
          setTimeout(() => process.kill(-first.child.pid!, "SIGKILL"), 3000);
        }
      },
    });
    const ended = await first.exited;
    assert.ok(killed, `the first run reached grpo: ${first.output().stderr.slice(-2000)}`);
    assert.equal(ended.signal, "SIGKILL");
    for (const stage of ["data", "sft", "eval-pre"]) assert.ok(existsSync(join(out, stage, "done.json")), `${stage} finished before the kill`);
    assert.equal(existsSync(join(out, "grpo", "done.json")), false, "grpo did not finish");

    const refused = pipeline(["--preset", "smoke", "--out", out, "--quiet"]);
    const refusedEnd = await refused.exited;
    assert.equal(refusedEnd.code, 2, "an existing run is never overwritten without --resume");
    assert.match(refused.output().stderr, /\[PIPELINE_EXISTS\]/);

    const second = pipeline(["--preset", "smoke", "--out", out, "--resume", "--quiet"]);
    const secondEnd = await second.exited;
    const { stdout, stderr } = second.output();
    assert.equal(secondEnd.code, 0, stderr.slice(-3000));
    for (const stage of ["data", "sft", "eval-pre"]) assert.match(stderr, new RegExp(`\\[pipeline\\] ${stage}: already complete, skipped \\(--resume\\)`));
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
      "sft/log.txt",
      "eval-pre/runs/suite.json",
      "eval-pre/log.txt",
      "grpo/model/model.safetensors",
      "grpo/model/adapter/adapter_model.safetensors",
      "grpo/model/log_history.json",
      "grpo/steps.jsonl",
      "eval-post/runs/suite.json",
      "card/report.json",
      "card.md",
      "summary.json",
    ])
      assert.ok(existsSync(join(out, file)), `${file} written`);
    const rows = readFileSync(join(out, "data/sft.jsonl"), "utf8").trim().split("\n");
    assert.ok(rows.length >= 4, "SFT rows from the oracle and noisy-oracle trajectories");
    for (const label of ["pre", "post"]) {
      const parent = join(out, `eval-${label}`, "runs", `search_plan_act--${label}`);
      const [run] = readdirSync(parent);
      const results = readFileSync(join(parent, run as string, "results.jsonl"), "utf8")
        .trim()
        .split("\n");
      assert.equal(results.length, 2, `eval-${label}: one episode per task of the suite`);
    }
    assert.match(readFileSync(join(out, "grpo/log.txt"), "utf8"), /train_grpo\.py .*--server-url http:\/\/127\.0\.0\.1:\d+/);

    // The card: one row per suite metric, a pre and a post column.
    const card = readFileSync(join(out, "card.md"), "utf8");
    assert.match(card, /\| Benchmark \| Metric \| n \| pre \| post \| Finding \|/);
    assert.match(card, /\| search_plan_act \| mean reward \| 2 \|/);
    assert.match(card, /\| search_plan_act \| outcome \| 2 \|/);

    // summary.json's shape.
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Json;
    assert.deepEqual(Object.keys(summary), ["preset", "seconds", "stages", "grpo", "comparisons"]);
    assert.equal(summary.preset, "smoke");
    assert.equal(typeof summary.seconds, "number");
    assert.deepEqual(
      summary.stages.map((stage: Json) => [stage.name, stage.status]),
      [
        ["data", "resumed"],
        ["sft", "resumed"],
        ["eval-pre", "resumed"],
        ["grpo", "done"],
        ["eval-post", "done"],
        ["card", "done"],
      ],
    );
    for (const stage of summary.stages) assert.ok(stage.name === "card" ? stage.seconds >= 0 : stage.seconds > 0, `${stage.name} took time`);
    assert.deepEqual(Object.keys(summary.grpo), ["steps", "reward_first", "reward_last", "frac_reward_zero_std_mean", "tool_calls_per_completion"]);
    assert.equal(summary.grpo.steps, 2);
    const logged = (JSON.parse(readFileSync(join(out, "grpo/model/log_history.json"), "utf8")) as Json[]).filter((entry) => typeof entry.reward === "number");
    assert.equal(summary.grpo.reward_first, logged[0]?.reward, "the first step's reward as TRL logged it");
    assert.equal(summary.grpo.reward_last, logged.at(-1)?.reward);
    assert.ok(summary.comparisons.length >= 2, "reward and outcome rows");
    for (const comparison of summary.comparisons) {
      assert.deepEqual(Object.keys(comparison), ["benchmark", "metric", "n", "pre", "post", "delta", "p", "p_holm"]);
      assert.deepEqual(Object.keys(comparison.pre), ["mean", "ci_low", "ci_high"]);
      assert.equal(comparison.benchmark, "search_plan_act");
      assert.ok(Math.abs(comparison.delta - (comparison.post.mean - comparison.pre.mean)) < 1e-9, "paired over the same tasks");
      assert.ok(comparison.p_holm >= comparison.p);
    }
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
        ["eval-pre", "not run"],
        ["grpo", "failed"],
        ["eval-post", "not run"],
        ["card", "not run"],
      ],
    );
    assert.equal(summary.grpo.steps, 1, "stopped after the first logged step");
    assert.equal(summary.grpo.frac_reward_zero_std_mean, 1);
    assert.equal(existsSync(join(out, "grpo", "model", "model.safetensors")), false, "no checkpoint from a run without signal");
  });
});
