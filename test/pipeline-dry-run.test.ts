import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { GrpoSignalMonitor, parseMetricsLine, summariseGrpo } from "../src/pipeline/grpo-signal.ts";
import { runCli } from "./support/run-cli.ts";

const work = mkdtempSync(join(tmpdir(), "toolgym-pipeline-dry-"));
after(() => rmSync(work, { recursive: true, force: true }));

/** The `$ ` lines of a dry run, by stage heading. */
function commandsByStage(text: string): Map<string, string[]> {
  const stages = new Map<string, string[]>();
  let current = "";
  for (const line of text.split("\n")) {
    const heading = /^## (\S+)/.exec(line);
    if (heading) {
      current = heading[1] as string;
      stages.set(current, []);
    } else if (line.startsWith("$ ")) stages.get(current)?.push(line.slice(2));
  }
  return stages;
}

describe("toolgym pipeline --preset seed --dry-run", () => {
  it("prints the seed card's commands and config and starts nothing", async () => {
    const out = join(work, "seed");
    const result = await runCli(["pipeline", "--preset", "seed", "--dry-run", "--out", out]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(existsSync(out), false, "a dry run writes nothing");
    const stages = commandsByStage(result.stdout);
    assert.match(result.stdout, /## sft \(skipped: /);
    assert.deepEqual(stages.get("data"), [`toolgym dataset search_plan_act --split train --seed 0 --n 4096 --config '{}' --out ${out}/data/prompts.parquet`]);

    const grpo = (stages.get("grpo") ?? []).find((line) => line.includes("train_grpo.py")) ?? "";
    for (const flag of [
      "--model Qwen/Qwen3-4B",
      "--lora-r 32",
      "--lora-alpha 64",
      "--lora-target-modules q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj",
      "--max-steps 250",
      "--per-device-batch-size 8",
      "--gradient-accumulation-steps 4",
      "--num-generations 8",
      "--use-vllm",
      "--vllm-mode colocate",
      "--no-enable-thinking",
      `--output-dir ${out}/grpo/grpo/model`,
      "--seed 0",
    ])
      assert.ok(grpo.includes(` ${flag}`), `grpo command has ${flag}: ${grpo}`);
    assert.equal(8 * 4, 32, "effective batch: 8 per device x 4 accumulation steps");
    assert.match(stages.get("grpo")?.[0] ?? "", /^toolgym serve /);

    const pre = stages.get("eval-pre") ?? [];
    assert.match(pre[0] ?? "", /vllm serve Qwen\/Qwen3-4B .*--tool-call-parser hermes/);
    assert.match(
      pre[1] ?? "",
      /^toolgym eval --suite seed-card --model 'pre=http:\/\/127\.0\.0\.1:PORT\/v1#Qwen\/Qwen3-4B' .*--max-retries 1 .*--data-dir data/,
    );
    const post = stages.get("eval-post") ?? [];
    assert.match(post[0] ?? "", new RegExp(`vllm serve ${out}/grpo/grpo/model `));
    assert.match(post[1] ?? "", /--suite seed-card --model 'grpo=/);
    assert.equal(
      pre[1]?.replace(/.*--temperature/, "").replace("eval-pre/runs/pre", "RUNS"),
      post[1]?.replace(/.*--temperature/, "").replace("eval-post/runs/grpo", "RUNS"),
      "same generation settings pre and post",
    );
    assert.deepEqual(stages.get("card"), [], "the card is rendered in-process from the eval runs (a comment line, no command)");
    assert.match(result.stdout, /## card\n\n# the card \(card\.md\)/);
    // The seed-card suite at the seed's n.
    for (const [benchmark, n] of [
      ["musique", 2417],
      ["2wiki", 12576],
      ["search_plan_ood", 100],
      ["babyai", 50],
    ] as const)
      assert.match(result.stdout, new RegExp(`benchmark: ${benchmark}\\n(?:.*\\n){1,8}?\\s+n: ${n}\\n`));
  });

  it("a --config file of the printed shape runs the same plan; a bad one is a coded one-line error", async () => {
    const out = join(work, "from-config");
    const printed = await runCli(["pipeline", "--preset", "seed", "--dry-run", "--out", out]);
    const config = join(work, "seed.yaml");
    writeFileSync(config, printed.stdout.split("## config\n\n")[1]!.split("\n\n## evaluation suite")[0]!);
    const again = await runCli(["pipeline", "--config", config, "--dry-run", "--out", out]);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(commandsByStage(again.stdout), commandsByStage(printed.stdout));
    const bad = join(work, "bad.yaml");
    writeFileSync(bad, "preset: mine\nenv: search_plan_act\n");
    const result = await runCli(["pipeline", "--config", bad, "--dry-run"]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^toolgym: .*field 'base'.*\[PIPELINE_CONFIG_INVALID\]\n$/);
    const unknown = await runCli(["pipeline", "--preset", "huge", "--dry-run"]);
    assert.equal(unknown.code, 2);
    const stages = await runCli(["pipeline", "--preset", "smoke", "--only", "grpo,nope", "--dry-run"]);
    assert.equal(stages.code, 2);
    assert.match(stages.stderr, /unknown stage 'nope'.*\[STAGE_UNKNOWN\]/);
  });
});

describe("toolgym pipeline --preset tiny --dry-run", () => {
  it("builds the tiny model from the trajectories: vocabulary and pretraining after them, SFT rows after the model", async () => {
    const out = join(work, "tiny");
    const result = await runCli(["pipeline", "--preset", "tiny", "--dry-run", "--out", out]);
    assert.equal(result.code, 0, result.stderr);
    const data = commandsByStage(result.stdout).get("data") ?? [];
    const position = (pattern: RegExp) => data.findIndex((line) => pattern.test(line));
    const trajectories = position(/^toolgym eval --env search_plan_act --agent noisy_oracle_0\.3 --split train /);
    const corpus = position(new RegExp(`^toolgym sft conversations ${out}/data/trajectories --out ${out}/data/tokenizer-corpus\\.jsonl$`));
    // Seed 1: seed 0's copying stalls on this vocabulary
    const model = position(/make-tiny-qwen3\.py .*--corpus .*tokenizer-corpus\.jsonl --vocab-size 4096 --induction-steps \d+ --pretrain-steps \d+ --seed 1$/);
    const rows = position(new RegExp(`^toolgym sft trajectories .* --model-dir ${out}/data/base-model `));
    assert.ok(trajectories >= 0 && trajectories < corpus && corpus < model && model < rows, data.join("\n"));
    // The imperfect teacher: demonstrations with an unrequested change (reward 0.475) are kept, failures dropped
    assert.ok(
      data.some((line) => /^toolgym eval --env search_plan_act --agent oracle_plus_collateral --split train /.test(line)),
      data.join("\n"),
    );
    assert.match(data[rows] ?? "", / --min-reward 0\.45( |$)/);
    const grpo = (commandsByStage(result.stdout).get("grpo") ?? []).find((line) => line.includes("train_grpo.py")) ?? "";
    // TRL's whole-distribution sampling in groups of 8: narrower sampling left most groups without reward variance
    // Four tool rounds, as the eval's four turns: a completion that makes the collateral change can still finish
    for (const flag of [
      "--lora-r 0",
      "--use-cpu",
      "--no-use-vllm",
      `--model ${out}/sft/model`,
      "--temperature 1",
      "--num-generations 8",
      "--max-tool-calling-iterations 4",
    ])
      assert.ok(grpo.includes(` ${flag}`), `grpo command has ${flag}: ${grpo}`);
    assert.ok(!grpo.includes("--top-p") && !grpo.includes("--top-k"), grpo);
    // The arms: two seeds on the environment's reward and the shuffled control, each saving curve checkpoints
    const stages = commandsByStage(result.stdout);
    const arms = (stages.get("grpo") ?? []).filter((line) => line.includes("train_grpo.py"));
    assert.deepEqual(
      arms.map((line) => [/--output-dir (\S+)/.exec(line)?.[1], /--seed (\d+)/.exec(line)?.[1], /--reward-transform (\S+)/.exec(line)?.[1] ?? null]),
      [
        [`${out}/grpo/grpo-s0/model`, "0", null],
        [`${out}/grpo/grpo-s1/model`, "1", null],
        [`${out}/grpo/shuffled/model`, "0", "shuffle_within_group"],
        [`${out}/grpo/grpo-from-filtered/model`, "0", null],
        [`${out}/grpo/exploit/model`, "0", null],
      ],
    );
    for (const line of arms) assert.match(line, / --curve-steps 50( |$)/);
    // Filter, then RL: the new arm starts from the filtered-SFT model, the others from the SFT model
    assert.deepEqual(
      arms.map((line) => /--model (\S+)/.exec(line)?.[1]),
      [`${out}/sft/model`, `${out}/sft/model`, `${out}/sft/model`, `${out}/baseline/model`, `${out}/sft/model`],
    );
    // The watch's positive control trains on the exploitable reward variant, over the preset's own env config
    assert.match(arms[4] ?? "", /--env-config .*"reward":"without_outcome"/);
    assert.match(arms[4] ?? "", /--env-config .*"worldSize":15/);
    for (const line of arms.slice(0, 4)) assert.ok(!line.includes("--env-config"), line);
    const baseline = stages.get("baseline") ?? [];
    assert.match(
      baseline[0] ?? "",
      new RegExp(`train_sft\\.py --model ${out}/data/base-model --dataset ${out}/data/sft-baseline\\.jsonl --output-dir ${out}/baseline/model .* --seed 0$`),
    );
    assert.ok(
      data.some((line) => line.includes(`--out ${out}/data/sft-baseline.jsonl`) && line.endsWith("--min-reward 0.9")),
      "the baseline's rows: reward ≥ 0.9",
    );
    // One transformers serve for the whole stage, started with no model: each evaluation names its checkpoint.
    const post = stages.get("eval-post") ?? [];
    const servers = post.filter((line) => line.endsWith(" &"));
    assert.equal(servers.length, 1, servers.join("\n"));
    assert.match(post[0] ?? "", /serve_transformers\.py --host 127\.0\.0\.1 --port PORT --device cpu --default-seed 0 &$/);
    assert.equal(post.at(-1), "kill %1");
    for (const arm of ["grpo-s0", "grpo-s1", "shuffled"])
      for (const step of [50, 100]) {
        const point = post.findIndex((line) => line.includes(`#${out}/grpo/${arm}/model/curve/step-${step}' `));
        assert.ok(point > 0, `${arm}'s step-${step} checkpoint is served`);
        assert.match(
          post[point] ?? "",
          new RegExp(`--n 50 --model '${arm}=http://127\\.0\\.0\\.1:PORT/v1#.* --out ${out}/eval-post/curve/${arm}/step-${step}$`),
        );
      }
    const pre = stages.get("eval-pre") ?? [];
    assert.ok(
      pre.some((line) => / --n 50 --num-trials 4 --model 'pre=.* --temperature 1 /.test(line)),
      "sampled: 4 per task at temperature 1",
    );
    assert.ok(
      pre.some((line) => line.endsWith(`--out ${out}/eval-pre/curve/pre/step-0`)),
      "the SFT model is every curve's step 0",
    );
    assert.match(result.stdout, /update: 1/, "one-hop update tasks");
    assert.match(result.stdout, /benchmark: search_plan_act\n(?:.*\n){1,12}?\s+n: 200\n/);
  });

  it("refuses a tiny model that learns from trajectories when there are none", async () => {
    const printed = await runCli(["pipeline", "--preset", "tiny", "--dry-run"]);
    const yaml = printed.stdout.split("## config\n\n")[1]!.split("\n\n## evaluation suite")[0]!;
    const config = join(work, "tiny-no-data.yaml");
    assert.match(yaml, /episodes: 4500/);
    writeFileSync(config, yaml.replace(/episodes: 4500/, "episodes: 0"));
    const result = await runCli(["pipeline", "--config", config, "--dry-run"]);
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stderr, /base\.vocabularySize.*data\.episodes.*\[PIPELINE_CONFIG_INVALID\]/);
  });
});

describe("GRPO signal check", () => {
  const line = (values: Record<string, number>) => `{'loss': 0.0}\nTOOLGYM_METRICS ${JSON.stringify(values)}`.split("\n")[1] as string;

  it("stops after K steps in which every group had zero reward variance, and names the fix", () => {
    const monitor = new GrpoSignalMonitor(3);
    assert.equal(monitor.feed("{'loss': 0.0, 'reward': 0.1}"), undefined, "TRL's own printout is not parsed");
    assert.equal(monitor.feed(line({ reward: 0.2, frac_reward_zero_std: 1, "tools/call_frequency": 0 })), undefined);
    assert.equal(monitor.feed(line({ reward: 0.2, frac_reward_zero_std: 1, "tools/call_frequency": 0 })), undefined);
    const verdict = monitor.feed(line({ reward: 0.2, frac_reward_zero_std: 1, "tools/call_frequency": 0 }));
    assert.match(verdict ?? "", /no learning signal: every group had zero reward variance in each of the first 3 steps .*tool calls per completion 0\.00/);
  });

  it("keeps going when any of the first K steps has a group with reward variance", () => {
    const monitor = new GrpoSignalMonitor(2);
    monitor.feed(line({ reward: 0.2, frac_reward_zero_std: 1 }));
    assert.equal(monitor.feed(line({ reward: 0.4, frac_reward_zero_std: 0.5 })), undefined);
    assert.equal(monitor.feed(line({ reward: 0.4, frac_reward_zero_std: 1 })), undefined, "only the first K steps are judged");
    assert.equal(new GrpoSignalMonitor(0).feed(line({ reward: 0, frac_reward_zero_std: 1 })), undefined, "K = 0 turns the check off");
  });

  it("summarises the steps as summary.json's grpo block", () => {
    const steps = [
      { reward: 0.1, frac_reward_zero_std: 1, "tools/call_frequency": 1 },
      { reward: 0.3, frac_reward_zero_std: 0.5, "tools/call_frequency": 2 },
    ].map((values) => parseMetricsLine(line(values))!);
    assert.deepEqual(summariseGrpo(steps), { steps: 2, reward_first: 0.1, reward_last: 0.3, frac_reward_zero_std_mean: 0.75, tool_calls_per_completion: 1.5 });
    assert.equal(parseMetricsLine("TOOLGYM_METRICS {not json"), undefined);
    assert.equal(parseMetricsLine('TOOLGYM_METRICS {"train_runtime": 3, "reward": 0.3}'), undefined, "the end-of-training log is not a step");
    const monitor = new GrpoSignalMonitor(0);
    monitor.feed(line({ step: 1, reward: 0.1 }));
    monitor.feed(line({ step: 1, reward: 0.2 }));
    assert.deepEqual(
      monitor.steps.map((step) => step.reward),
      [0.2],
      "a step logged twice counts once",
    );
  });
});

describe("toolgym pipeline --preset tau2-seed --dry-run", () => {
  it("prints the Tau2 SFT card's GPU recipe: the thinking base model, AReaL's file, sft tau2 rows, TRL's defaults, a thinking evaluation with tau2's user", async () => {
    const out = join(work, "tau2-seed");
    const result = await runCli(["pipeline", "--preset", "tau2-seed", "--dry-run", "--out", out]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(existsSync(out), false, "a dry run writes nothing");
    const stages = commandsByStage(result.stdout);
    const data = stages.get("data") ?? [];
    assert.match(data[0] ?? "", new RegExp(`hf download inclusionAI/AReaL-tau2-data tau2_sft_train\\.jsonl --repo-type dataset --local-dir ${out}/data$`));
    assert.match(
      data[1] ?? "",
      new RegExp(`hf download MMOPD/Qwen3-4B-OT3-2ep --include 'tokenizer\\*' '\\*\\.jinja' .* --local-dir ${out}/data/base-tokenizer$`),
    );
    // Rows as `sft tau2` builds them: thinking enabled, a 32,768-token context, every trajectory (no --only-correct)
    assert.equal(
      data[2],
      `toolgym sft tau2 ${out}/data/tau2_sft_train.jsonl --model-dir ${out}/data/base-tokenizer --out ${out}/data/sft.jsonl --max-tokens 32768 --enable-thinking true`,
    );
    assert.equal(data.length, 3, "no GRPO prompts without a grpo stage");
    // TRL's SFTTrainer on the pretokenized rows in bf16; learning rate, epochs and batch size are TRL's own defaults
    const sft = stages.get("sft") ?? [];
    assert.equal(sft.length, 1);
    assert.match(
      sft[0] ?? "",
      new RegExp(
        `python/train_sft\\.py --model MMOPD/Qwen3-4B-OT3-2ep --dataset ${out}/data/sft\\.jsonl --output-dir ${out}/sft/model --trl-defaults --bf16 --max-length 32768 `,
      ),
    );
    for (const flag of ["--learning-rate", "--epochs", "--per-device-batch-size", "--gradient-accumulation-steps", "--lora-r", "--use-cpu"])
      assert.ok(!sft[0]!.includes(flag), `the card states no ${flag}: ${sft[0]}`);
    assert.match(result.stdout, /33,531 examples, one assistant turn each, every trajectory regardless of outcome/);
    assert.match(result.stdout, /TRL's defaults for learning rate, epochs and batch size \(the card states none: --trl-defaults\)/);
    // The evaluation: the SFT model as a thinking model behind vLLM's reasoning parser, 4 trials on each test split,
    // tau2's leaderboard protocol (no customer tool: AReaL's conversations are plain messages) with its user and judge
    const pre = stages.get("eval-pre") ?? [];
    assert.match(pre[0] ?? "", new RegExp(`vllm serve ${out}/sft/model .*--tool-call-parser hermes --reasoning-parser qwen3 --max-model-len 32768 &$`));
    const rows = pre.filter((line) => line.startsWith("toolgym eval") && line.includes(" --model "));
    assert.deepEqual(
      rows.map((line) => /--env (\S+) --config '\{\}' --split (\S+) --seed 300 --n (\d+) --num-trials (\d+) /.exec(line)?.slice(1)),
      [
        ["tau2_retail", "test", "40", "4"],
        ["tau2_telecom", "test", "40", "4"],
      ],
    );
    for (const line of rows) {
      assert.match(
        line,
        /--user-model 'http:\/\/127\.0\.0\.1:8001\/v1#gpt-4\.1-2025-04-14' --judge-model 'http:\/\/127\.0\.0\.1:8001\/v1#gpt-4\.1-2025-04-14' /,
      );
      assert.match(line, / --temperature 0 --max-tokens 8192 --chat-template-kwargs '\{"enable_thinking":true\}' /);
      assert.match(line, new RegExp(`--out ${out}/eval-pre/runs/pre$`));
    }
    assert.equal(pre.filter((line) => line === "kill %1").length, 1);
    // The floors: every tau2 pilot on the same tasks, with the same user, judge and trials, no server
    const floors = pre.filter((line) => line.includes(" --agent "));
    assert.deepEqual(
      floors.filter((line) => line.includes("--env tau2_retail")).map((line) => /--agent (\S+)/.exec(line)?.[1]),
      [
        "do_nothing_stop",
        "transfer_immediately",
        "ask_user_tools",
        "ask_user_tools_each",
        "leave_at_once",
        "promise_everything",
        "read_only_spam",
        "guessed_writes",
      ],
    );
    for (const line of floors) {
      assert.match(line, /--seed 300 --n 40 --user-model 'http:\/\/127\.0\.0\.1:8001\/v1#gpt-4\.1-2025-04-14' .* --num-trials 4 /);
      assert.match(line, new RegExp(`--out ${out}/eval-pre/floors/tau2_(retail|telecom) --quiet$`));
    }
    assert.match(result.stdout, /## grpo \(skipped: no `grpo` in the config\)/);
    assert.match(result.stdout, /## eval-post \(skipped: /);
  });

  it("--user-model and --judge-model say where tau2's user is served; --eval-base adds the base model's evaluation", async () => {
    const out = join(work, "tau2-seed-flags");
    const address = "http://10.0.0.5:9000/v1#gpt-4.1-2025-04-14";
    const result = await runCli([
      "pipeline",
      "--preset",
      "tau2-seed",
      "--dry-run",
      "--out",
      out,
      "--user-model",
      address,
      "--judge-model",
      address,
      "--eval-base",
    ]);
    assert.equal(result.code, 0, result.stderr);
    const pre = commandsByStage(result.stdout).get("eval-pre") ?? [];
    assert.match(pre[0] ?? "", /^vllm serve MMOPD\/Qwen3-4B-OT3-2ep .*--reasoning-parser qwen3 /, "the base model first, as a thinking model too");
    assert.match(pre[1] ?? "", /--model 'base=http:\/\/127\.0\.0\.1:PORT\/v1#MMOPD\/Qwen3-4B-OT3-2ep' /);
    const evals = pre.filter((line) => line.startsWith("toolgym eval") && line.includes(" --model "));
    assert.equal(evals.length, 4, "two test splits for each of base and pre");
    for (const line of evals) assert.ok(line.includes(`--user-model '${address}' --judge-model '${address}' `), line);
    const bad = await runCli(["pipeline", "--preset", "seed", "--dry-run", "--user-model", address]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /eval\.userModel.*explicit rows.*\[PIPELINE_CONFIG_INVALID\]/);
  });
});

describe("toolgym pipeline --preset tau2 --dry-run", () => {
  it("plays the scripted oracle on the three domains' train splits under the customer-as-a-tool protocol, exports tau2-sft lines, and evaluates the test splits with trials", async () => {
    const out = join(work, "tau2");
    const result = await runCli(["pipeline", "--preset", "tau2", "--dry-run", "--out", out]);
    assert.equal(result.code, 0, result.stderr);
    const stages = commandsByStage(result.stdout);
    const data = stages.get("data") ?? [];
    const plays = data.filter((line) => line.startsWith("toolgym eval"));
    assert.deepEqual(
      plays.map((line) => /--env (\S+) --agent oracle --split (\S+) --n (\d+) --config '\{"customer":"tool"\}' /.exec(line)?.slice(1)),
      [
        ["tau2_mock", "base", "10"],
        ["tau2_retail", "train", "74"],
        ["tau2_telecom", "train", "74"],
      ],
    );
    for (const env of ["tau2_mock", "tau2_retail", "tau2_telecom"])
      assert.ok(
        data.includes(
          `toolgym export ${out}/data/trajectories/${env}--scripted-oracle/tau2-sft --format tau2-sft --out ${out}/data/tau2-sft/${env}--oracle.jsonl`,
        ),
        data.join("\n"),
      );
    const position = (pattern: RegExp) => data.findIndex((line) => pattern.test(line));
    const model = position(/make-tiny-qwen3\.py .*--corpus .*tokenizer-corpus\.jsonl --vocab-size 4096 /);
    const rows = position(new RegExp(`^toolgym sft tau2 ${out}/data/tau2-sft\\.jsonl --model-dir ${out}/data/base-model --out ${out}/data/sft\\.jsonl `));
    assert.ok(position(/^toolgym export /) < model && model < rows, data.join("\n"));
    assert.match(result.stdout, /## data\n\n(?:.*\n)*# the 3 exports concatenated into /);
    const pre = stages.get("eval-pre") ?? [];
    const evals = pre.filter((line) => line.startsWith("toolgym eval") && line.includes(" --model "));
    assert.deepEqual(
      evals.map((line) => [
        /--model '(\w+)=/.exec(line)?.[1],
        /--env (\S+)/.exec(line)?.[1],
        /--split (\S+)/.exec(line)?.[1],
        /--num-trials (\d+)/.exec(line)?.[1],
      ]),
      [
        ["base", "tau2_mock", "base", "2"],
        ["base", "tau2_retail", "test", "2"],
        ["base", "tau2_telecom", "test", "2"],
        ["pre", "tau2_mock", "base", "2"],
        ["pre", "tau2_retail", "test", "2"],
        ["pre", "tau2_telecom", "test", "2"],
      ],
    );
    for (const line of evals) assert.match(line, /--config '\{"customer":"tool"\}'/);
  });
});
