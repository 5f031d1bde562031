import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { after, describe, it } from "node:test";
import { requirePython } from "./support/qwen3.ts";

/**
 * The tau2-smoke preset end to end, every stage for real: the scripted oracle's tau2_mock conversations under
 * the customer-as-a-tool protocol, exported with `--format tau2-sft`, `sft tau2` rows for a random tiny Qwen3,
 * train_sft.py, the base and SFT models behind transformers serve with two trials per task, and the card.
 */
const ROOT = resolve(import.meta.dirname, "..");
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function pipeline(args: string[]) {
  requirePython();
  const child = spawn(process.execPath, [join(ROOT, "bin/toolgym.js"), "pipeline", ...args], {
    cwd: ROOT,
    env: { ...process.env, OMP_NUM_THREADS: "2" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => child.once("close", (code) => done({ code, stdout, stderr })));
}

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");

describe("toolgym pipeline --preset tau2-smoke", () => {
  const work = mkdtempSync(join(tmpdir(), "toolgym-pipeline-tau2-smoke-"));
  after(() => rmSync(work, { recursive: true, force: true }));

  it("runs data → sft → eval (base and SFT model, trials, pass^k) → card, and the dry run is what ran", { timeout: 30 * 60_000 }, async () => {
    const out = join(work, "run");
    const run = await pipeline(["--preset", "tau2-smoke", "--out", out, "--quiet"]);
    assert.equal(run.code, 0, run.stderr.slice(-3000));
    assert.match(run.stdout, /pipeline tau2-smoke finished/);
    assert.match(run.stdout, /\n {2}pre tau2_mock: mean reward \d\.\d{3}; pass\^1 /);

    // data: the oracle's conversations (scripted user), their AReaL lines with the tools offered, the rows.
    const conversation = join(out, "data/trajectories/tau2_mock--scripted-oracle/tau2-sft/results.jsonl");
    const played = lines(conversation).map((line) => JSON.parse(line) as Json);
    assert.equal(played.length, 2, "two tau2_mock tasks");
    for (const episode of played) assert.equal(episode.reward, 1, "the oracle solves both");
    const exported = lines(join(out, "data/tau2-sft.jsonl")).map((line) => JSON.parse(line) as Json);
    const turns = played.reduce((sum, episode) => sum + (episode.turns as number), 0);
    assert.equal(exported.length, turns, "one AReaL line per agent turn");
    for (const line of exported) {
      assert.deepEqual(Object.keys(line), ["messages", "answer", "tools", "metadata"]);
      assert.ok(
        line.tools.some((tool: Json) => tool.function.name === "send_message_to_user"),
        "the customer tool is among the tools offered",
      );
    }
    assert.ok(
      exported.some((line) => line.answer.tool_calls?.[0]?.function?.name === "send_message_to_user"),
      "the oracle reaches the customer through the tool",
    );
    const report = JSON.parse(readFileSync(join(out, "data/sft.jsonl.report.json"), "utf8")) as Json;
    assert.equal(report.rows_in, turns);
    assert.equal(report.rows_out, turns, "every line became a row");
    assert.equal(lines(join(out, "data/sft.jsonl")).length, turns);
    for (const file of ["data/base-model/model.safetensors", "sft/model/model.safetensors", "sft/model/log_history.json", "card/report.json", "report.html"])
      assert.ok(existsSync(join(out, file)), `${file} written`);

    // eval-pre: the base model and the SFT model, each task played twice (tau2's trials).
    for (const label of ["base", "pre"]) {
      const parent = join(out, "eval-pre/runs", label, `tau2_mock--${label}`);
      const [runId] = readdirSync(parent);
      const results = lines(join(parent, runId as string, "results.jsonl")).map((line) => JSON.parse(line) as Json);
      assert.deepEqual(
        results.map((result) => [result.example_id, result.trial]).sort(),
        [
          [0, 0],
          [0, 1],
          [1, 0],
          [1, 1],
        ],
        `${label}: 2 tasks × 2 trials`,
      );
      for (const result of results) assert.equal(result.info.trajectory.env.config.customer, "tool", "evaluated under the protocol it was trained on");
    }

    // summary.json: the stages as run (no GRPO in this card) and each model's tau2 numbers.
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Json;
    assert.deepEqual(Object.keys(summary), ["preset", "seconds", "stages", "grpo", "comparisons", "arms", "evaluation", "eval_seeds", "floors"]);
    assert.equal(summary.preset, "tau2-smoke");
    assert.deepEqual(
      summary.stages.map((stage: Json) => [stage.name, stage.status]),
      [
        ["data", "done"],
        ["sft", "done"],
        ["baseline", "skipped"],
        ["eval-pre", "done"],
        ["grpo", "skipped"],
        ["eval-post", "skipped"],
        ["card", "done"],
      ],
    );
    assert.equal(summary.grpo, null);
    assert.deepEqual(summary.arms, []);
    assert.deepEqual(
      summary.evaluation.map((entry: Json) => [entry.benchmark, entry.model, entry.n, entry.summary.num_trials, entry.summary.tasks, entry.summary.protocol]),
      [
        ["tau2_mock", "base", 2, 2, 2, "customer_tool"],
        ["tau2_mock", "pre", 2, 2, 2, "customer_tool"],
      ],
    );
    for (const entry of summary.evaluation) {
      assert.deepEqual(Object.keys(entry.summary.pass_hat), ["1", "2"], "pass^1 and pass^2 from two trials");
      assert.ok(entry.summary.pass_hat["2"] <= entry.summary.pass_hat["1"]);
      assert.ok(entry.reward.ci_low <= entry.reward.mean && entry.reward.mean <= entry.reward.ci_high);
    }

    // The card: base and SFT model side by side, tau2's pass^k and protocol, the evaluation settings.
    const card = readFileSync(join(out, "card.md"), "utf8");
    assert.match(card, /^---\n[\s\S]*?\n---\n\n# sft\/model \(toolgym pipeline, preset tau2-smoke\)\n/);
    assert.match(card, /\| Benchmark \| Metric \| n \| base \| pre \| Finding \|/);
    assert.match(card, /\| tau2_mock \| mean reward \| 2 \|/);
    assert.match(
      card,
      /τ²-bench pass\^1 \d\.\d{3} \[[^\]]+\] · pass\^2 \d\.\d{3} \[[^\]]+\] \(2 tasks × 2 trials; avg_reward \d\.\d{3}; protocol: the customer as a tool/,
    );
    assert.match(card, /## Evaluation settings\n\n- Models: `base` \(the base model\), `pre` \(the model after SFT\), each behind transformers serve/);
    assert.match(card, /- Plays per task: 2 \(pass\^k/);
    assert.match(card, /- tau2's user simulator: the scripted user; NL-assertion judge: none/);
    assert.ok(!card.includes(work), "no path of this machine's temporary directory in the card");
    assert.ok(!card.includes("## Arms"), "no arms without GRPO");

    // The dry run is what ran: every stage's executed commands equal its dry-run lines, ports aside.
    const dry = await pipeline(["--preset", "tau2-smoke", "--out", out, "--dry-run"]);
    assert.equal(dry.code, 0, dry.stderr);
    const ports = (line: string) => line.replace(/(127\.0\.0\.1:|--port )(\d+|PORT|SERVER_PORT)\b/g, "$1N");
    const planned = new Map<string, string[]>();
    let current = "";
    for (const line of dry.stdout.split("\n")) {
      const heading = /^## (\S+)/.exec(line);
      if (heading) planned.set((current = heading[1] as string), []);
      else if (line.startsWith("$ ")) planned.get(current)?.push(ports(line.slice(2)));
    }
    for (const stage of ["data", "sft", "baseline", "eval-pre", "grpo", "eval-post", "card"]) {
      const file = join(out, stage, "commands.txt");
      const executed = existsSync(file) ? lines(file).map(ports) : [];
      assert.deepEqual(executed, planned.get(stage), `${stage}: executed = dry run`);
    }
    assert.ok((planned.get("data") ?? []).some((line) => line.includes("--format tau2-sft")));
  });

  it("train_sft.py --trl-defaults leaves the schedule options not given to TRL's SFTConfig; without it, the script's own", async () => {
    const python = requirePython();
    const script = [
      "import sys; sys.path.insert(0, 'python')",
      "from train_sft import parse_arguments",
      "base = ['--dataset', 'x', '--output-dir', 'y']",
      "trl = parse_arguments(base + ['--trl-defaults', '--bf16'])",
      "own = parse_arguments(base)",
      "given = parse_arguments(base + ['--trl-defaults', '--learning-rate', '3e-5'])",
      "print(trl.learning_rate, trl.epochs, trl.per_device_batch_size, trl.gradient_accumulation_steps, trl.bf16, own.learning_rate, own.epochs, own.gradient_accumulation_steps, given.learning_rate)",
    ].join("\n");
    const { stdout } = await promisify(execFile)(python, ["-c", script], { cwd: resolve(import.meta.dirname, ".."), timeout: 120_000 });
    assert.equal(stdout.trim(), "None None None None True 1e-05 2.0 32 3e-05");
  });
});
