import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { requirePython } from "./support/qwen3.ts";
import { tinyQwen3Dir } from "./support/tiny-qwen3.ts";

/**
 * The seed pipeline in miniature, on CPU: SFT rows built in Python from oracle trajectories of `toolgym eval`,
 * then GRPO with TRL's `environment_factory` against `toolgym serve` (a child process on a free loopback port),
 * with TRL's own tool loop calling our tools. GRPO starts from the shared tiny Qwen3 that SFT already taught to
 * emit tool calls (real tokenizer and chat template; test/support/tiny-qwen3.ts): a random model calls no tool.
 * train_sft.py itself (its loss logged, its checkpoint served) is checked where the pipeline runs it
 * (test/pipeline-smoke.test.ts); a second SFT here would only repeat it.
 */
const root = resolve(import.meta.dirname, "..");
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function freePort(): Promise<number> {
  return new Promise((done) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => done(port));
    });
  });
}

/** Runs a command to completion (asynchronously); fails with its output on a non-zero exit. */
function run(command: string, args: string[]): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", TOKENIZERS_PARALLELISM: "false", OMP_NUM_THREADS: "2", TRL_EXPERIMENTAL_SILENCE: "1" },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("close", (code) => (code === 0 ? done(output) : fail(new Error(`${command} ${args.join(" ")} exited with ${code}:\n${output.slice(-4000)}`))));
  });
}

const lastJson = (output: string): Json =>
  JSON.parse(
    output
      .trim()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .at(-1) as string,
  );

describe("TRL GRPO end to end on CPU against toolgym serve", () => {
  let server: ChildProcess | undefined;
  let work: string | undefined;
  after(() => {
    server?.kill("SIGTERM");
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it(
    "SFT rows from oracle trajectories; GRPOTrainer(environment_factory=…) calls tools through the server and saves adapter + merged checkpoint",
    { timeout: 20 * 60_000 },
    async () => {
      const python = requirePython();
      work = mkdtempSync(join(tmpdir(), "toolgym-trl-e2e-"));
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      server = spawn(process.execPath, [join(root, "bin/toolgym.js"), "serve", "--port", String(port)], { cwd: root, stdio: "ignore" });
      const env = "mock";
      const toolgym = (...args: string[]) => run(process.execPath, [join(root, "bin/toolgym.js"), ...args]);
      const base = tinyQwen3Dir(python, { toolCallSft: true });
      await Promise.all([
        toolgym("eval", "--env", env, "--agent", "oracle", "--split", "train", "--seed", "1", "--n", "4", "--out", join(work, "oracle"), "--quiet"),
        toolgym("dataset", env, "--split", "train", "--seed", "2", "--n", "8", "--out", join(work, "prompts.parquet")),
      ]);
      // Generous: a loaded CI machine starts node slowly; the server's exit ends the wait at once.
      let tools: Json | undefined;
      for (const deadline = Date.now() + 180_000; !tools && Date.now() < deadline && server.exitCode === null;) {
        tools = await fetch(`${url}/envs/${env}`).then(
          (response) => response.json() as Promise<Json>,
          () => undefined,
        );
        if (!tools) await new Promise((done) => setTimeout(done, 100));
      }
      assert.ok(tools, `toolgym serve answered (exit code ${server.exitCode})`);

      // Pretokenized rows (the `toolgym sft` format) from the oracle trajectories, rendered as GRPOTrainer renders.
      const rows = lastJson(await run(python, [join(root, "python/tests/oracle_sft_rows.py"), join(work, "oracle"), url, env, base, join(work, "sft.jsonl")]));
      assert.equal(rows.rows, 8, "two assistant turns per oracle trajectory");

      // GRPO through the recipe script, against the running server.
      const before = (await (await fetch(`${url}/stats`)).json()) as Json;
      const output = join(work, "grpo");
      await run(python, [
        join(root, "python/train_grpo.py"),
        "--model",
        base,
        "--dataset",
        join(work, "prompts.parquet"),
        "--server-url",
        url,
        "--output-dir",
        output,
        "--no-use-vllm",
        "--use-cpu",
        "--max-steps",
        "2",
        "--per-device-batch-size",
        "4",
        "--gradient-accumulation-steps",
        "1",
        "--num-generations",
        "2",
        "--temperature",
        "0.7",
        "--max-completion-length",
        "96",
        "--max-tool-calling-iterations",
        "3",
        "--lora-r",
        "8",
        "--lora-alpha",
        "16",
        "--learning-rate",
        "1e-4",
      ]);
      const stats = (await (await fetch(`${url}/stats`)).json()) as Json;
      const counters = stats.byEnv[env] as Json;
      const calls = counters.toolCalls - (before.byEnv[env]?.toolCalls ?? 0);
      const rewards = counters.rewards - (before.byEnv[env]?.rewards ?? 0);
      assert.ok(calls > 0, "TRL's tool loop called tools through the server");
      assert.equal(rewards, 2 * 4, "one environment reward per rollout: 2 steps × 4 completions");

      const log = JSON.parse(readFileSync(join(output, "log_history.json"), "utf8")) as Json[];
      const steps = log.filter((entry) => entry["rewards/ToolgymMock/mean"] !== undefined);
      assert.equal(steps.length, 2);
      const trlMean = steps.reduce((sum, entry) => sum + entry["rewards/ToolgymMock/mean"], 0) / steps.length;
      const serverMean = (counters.rewardSum - (before.byEnv[env]?.rewardSum ?? 0)) / rewards;
      assert.ok(Math.abs(trlMean - serverMean) < 1e-6, `TRL's reward mean ${trlMean} equals the server's ${serverMean}`);
      assert.ok(
        steps.every((entry) => entry["tools/call_frequency"] > 0),
        "TRL counted tool calls",
      );
      assert.ok(
        steps.every((entry) => typeof entry["toolgym/outcome"] === "number" && typeof entry["toolgym/stop"] === "number"),
        "reward components logged",
      );
      // The reward-hacking watch, through TRL's own metrics (so report_to reaches it): the training episodes' mean
      // reward (TRL's own reward mean) and outcome, their gap, and each signature GET /envs lists, as a share
      const signatures = (tools.watch?.signatures ?? []).map((signature: Json) => signature.name as string);
      assert.deepEqual(signatures, ["finished at once", "reward without outcome"]);
      for (const entry of steps) {
        assert.ok(Math.abs(entry["watch/reward_mean"] - entry["rewards/ToolgymMock/mean"]) < 1e-6, "the watch's reward is TRL's reward");
        assert.ok(Math.abs(entry["watch/outcome_mean"] - entry["toolgym/outcome"]) < 1e-6, "the watch's outcome is the outcome component");
        assert.ok(Math.abs(entry["watch/gap"] - (entry["watch/reward_mean"] - entry["watch/outcome_mean"])) < 1e-6);
        for (const name of signatures) {
          const share = entry[`watch/signature/${name}`];
          // A share of the step's 4 scored completions: 0, 1/4, … or 1.
          assert.ok(typeof share === "number" && Number.isInteger(share * 4) && share >= 0 && share <= 1, `${name}: share ${share}`);
          assert.equal(entry[`watch/flag/${name}`], 0, "two steps are fewer than the watch's two windows: nothing flagged");
        }
      }

      const checkpoint = lastJson(await run(python, [join(root, "python/tests/check_checkpoint.py"), output, base]));
      for (const file of [
        "model.safetensors",
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
        "adapter/adapter_model.safetensors",
        "adapter/adapter_config.json",
      ]) {
        assert.ok(checkpoint.files.includes(file), `${file} written (files: ${checkpoint.files.join(", ")})`);
      }
      assert.deepEqual(checkpoint.architecture, ["Qwen3ForCausalLM"]);
      assert.ok(checkpoint.max_logit_difference < 1e-3, `merged checkpoint = base + adapter (max logit difference ${checkpoint.max_logit_difference})`);
      assert.equal(
        readFileSync(join(output, "chat_template.jinja"), "utf8"),
        readFileSync(join(root, "assets/qwen3/chat_template.jinja"), "utf8"),
        "the original chat template is saved, not TRL's training variant",
      );
      assert.ok(existsSync(join(output, "adapter")));
    },
  );
});
