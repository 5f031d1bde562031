import type { Command } from "commander";
import { UsageError, parseConfig, type JsonValue } from "../../core/index.ts";
import { DEFAULT_EVAL_ENVIRONMENTS, getEnvironment, isEnvironmentId } from "../../envs/registry.ts";
import {
  MAX_WORKERS,
  defaultWorkers,
  formatSummaryTable,
  checkEvaluation,
  runEvaluation,
  type EvaluationRow,
  type RunSummary,
} from "../../eval/run-evaluation.ts";
import { EXIT_INTERRUPTED, EXIT_OK, EXIT_RUNTIME } from "../errors.ts";
import type { CliIo, CommandContext } from "../io.ts";
import {
  collectText,
  parseChoice,
  parseInteger,
  parseJson,
  parseConfigOption,
  parseNumber,
  parseText,
  requireOutputDirectory,
  resolveSplit,
  splitList,
} from "../options.ts";
import { describeErrored, describeFailedRuns } from "../run-errors.ts";
import { checkServers, modelSpecs } from "./eval-models.ts";
import { runSuiteForCli } from "./eval-suite.ts";

export interface EvalCommandOptions {
  env?: string;
  agent?: string;
  n?: number | "all";
  seed?: number;
  split?: string;
  config?: string;
  /** tau2 environments: the simulated user's and the NL judge's model, URL#NAME (merged into the config). */
  userModel?: string;
  judgeModel?: string;
  /** tau2: `chat_template_kwargs` for the user's (judge's) requests; tau2 sends none. */
  userChatTemplateKwargs?: Record<string, JsonValue>;
  judgeChatTemplateKwargs?: Record<string, JsonValue>;
  out?: string;
  quiet?: boolean;
  baseUrl?: string[];
  model?: string[];
  label?: string;
  apiKey?: string;
  concurrency?: number;
  workers?: number;
  samples?: number;
  numTrials?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTokens?: number;
  samplingSeed?: number;
  chatTemplateKwargs?: Record<string, JsonValue>;
  maxTurns?: number;
  timeout?: number;
  maxReplyMb?: number;
  httpClient?: "undici" | "openai";
  maxRetries?: number;
  recoverTextToolCalls?: boolean;
  resume?: boolean;
  keepErrored?: boolean;
  /** The run summaries as JSON on stdout instead of the table. */
  json?: boolean;
  runId?: string;
  suite?: string;
  dataDir?: string;
  preflight: boolean;
}

const DEFAULT_N = 100;

/** Config keys an environment's zod object schema declares. */
function configKeys(env: { configSchema: unknown }): string[] {
  const shape = (env.configSchema as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

/** `--config` with `--user-model`/`--judge-model` merged in as `user_model`/`judge_model`, for environments that declare them. */
function withModelRoles(env: { id: string; configSchema: unknown }, options: EvalCommandOptions): string {
  const roles = {
    ...(options.userModel ? { user_model: options.userModel } : {}),
    ...(options.judgeModel ? { judge_model: options.judgeModel } : {}),
    ...(options.userChatTemplateKwargs ? { user_chat_template_kwargs: options.userChatTemplateKwargs } : {}),
    ...(options.judgeChatTemplateKwargs ? { judge_chat_template_kwargs: options.judgeChatTemplateKwargs } : {}),
  };
  if (Object.keys(roles).length === 0) return options.config ?? "{}";
  const unsupported = Object.keys(roles).filter((key) => !configKeys(env).includes(key));
  if (unsupported.length > 0)
    throw new UsageError({
      code: "OPTION_UNSUPPORTED",
      message: `${env.id} has no simulated user or judge (its config has no ${unsupported.join(", ")}); drop --user-model/--judge-model and their --*-chat-template-kwargs`,
    });
  return JSON.stringify({ ...(JSON.parse(options.config ?? "{}") as object), ...roles });
}

/** `--n N` or `--n all` (every task of a fixed dataset's split). */
function parseTaskCount(value: string): number | "all" {
  return value.trim() === "all" ? "all" : parseInteger("--n", { min: 1 })(value);
}

/**
 * Trials per task: `--num-trials K`, or `--samples K`, its older name (the same repetitions; both together
 * are refused rather than one silently winning).
 */
function trialsPerTask(options: EvalCommandOptions): number | undefined {
  if (options.numTrials !== undefined && options.samples !== undefined)
    throw new UsageError({ code: "OPTION_CONFLICT", message: "--samples is the older name of --num-trials (both repeat each task); pass only --num-trials" });
  return options.numTrials ?? options.samples;
}

/**
 * A row per environment; `--n` beyond a fixed dataset is refused (it would silently repeat tasks and shrink
 * the CIs). Without `--n`, a fixed dataset runs all the tasks of its split, a generated one 100.
 */
function evaluationRows(options: EvalCommandOptions): EvaluationRow[] {
  const envIds = options.env ? splitList("--env", options.env) : DEFAULT_EVAL_ENVIRONMENTS;
  const trials = trialsPerTask(options);
  return envIds.map((id) => {
    const env = getEnvironment(id);
    const split = resolveSplit(env, options.split);
    const config = parseConfig(env.id, env.configSchema, withModelRoles(env, options));
    const available = env.taskCount?.({ split, config });
    if (options.n === "all" && available === undefined)
      throw new UsageError({ code: "OPTION_INVALID", message: `--n all needs a fixed dataset; ${env.id} generates its tasks, so pass --n N` });
    const n = options.n === "all" || (options.n === undefined && available !== undefined) ? (available as number) : (options.n ?? DEFAULT_N);
    if (available !== undefined && n > available) {
      throw new UsageError({
        code: "N_BEYOND_DATASET",
        message: `--n ${n} is more than the ${available} distinct tasks of ${env.id} (split ${split}) with this config; pass --n ${available} or less, or --n all (use --num-trials K to repeat each task)`,
      });
    }
    return {
      env,
      config,
      split,
      seed: options.seed ?? env.defaultSeed ?? 0,
      n,
      ...(env.metrics ? { metrics: env.metrics } : {}),
      ...(trials !== undefined ? { samples: trials } : {}),
      ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    };
  });
}

/** Each run's benchmark summary line (the environment's `summary` hook, e.g. tau2's pass^1..pass^K with CIs). */
function ownSummaryLines(summaries: readonly RunSummary[]): string {
  const lines = summaries.flatMap((summary) => {
    const spec = isEnvironmentId(summary.env) ? getEnvironment(summary.env).summary : undefined;
    const value = spec ? (summary[spec.key] as { text?: unknown } | undefined) : undefined;
    return spec && typeof value?.text === "string" ? [`${spec.label} ${summary.env} ${summary.model}: ${value.text.trim()}`] : [];
  });
  return lines.length > 0 ? `\n${lines.join("\n")}\n` : "";
}

/** Exit code and messages after the runs: every episode errored is a failure, with the reasons. */
export function finishRuns(summaries: RunSummary[], io: CliIo, interrupted: boolean, json = false): number {
  const directories = summaries.map((summary) => {
    const resumed = [
      ...(summary.resumedFrom > 0 ? [`${summary.resumedFrom} episodes were already done`] : []),
      ...(summary.rerun ? [`${summary.rerun} errored episodes were played again`] : []),
    ];
    return `  ${summary.dir}${resumed.length > 0 ? `  (resumed: ${resumed.join("; ")})` : ""}`;
  });
  if (json) io.stdout.write(`${JSON.stringify(summaries, null, 2)}\n`);
  else io.stdout.write(`${formatSummaryTable(summaries)}\n${ownSummaryLines(summaries)}\nruns:\n${directories.join("\n")}\n`);
  // Run notes (records skipped while loading data, lines the resume reader worked around) are in summary.json too.
  for (const summary of summaries) for (const note of summary.notes) io.stderr.write(`toolgym: note: ${summary.benchmark} / ${summary.model}: ${note}\n`);
  if (interrupted) {
    const done = summaries.reduce((sum, summary) => sum + summary.scored + summary.errored, 0);
    const total = summaries.reduce((sum, summary) => sum + summary.total, 0);
    io.stderr.write(`toolgym: interrupted; ${done} of ${total} episodes are saved; run the same command with --resume to finish [INTERRUPTED]\n`);
    return EXIT_INTERRUPTED;
  }
  const failed = summaries.filter((summary) => summary.status === "failed" || (summary.scored === 0 && summary.errored > 0));
  for (const summary of summaries.filter((candidate) => !failed.includes(candidate) && candidate.errored > 0)) {
    io.stderr.write(`toolgym: note: ${describeErrored(summary)}; errored episodes are excluded from the means\n`);
  }
  if (failed.length === 0) return EXIT_OK;
  io.stderr.write(`toolgym: every episode errored in ${describeFailedRuns(failed)} [EPISODES_ALL_ERRORED]\n`);
  return EXIT_RUNTIME;
}

/** Options that only a model behind a server uses: given with a scripted agent they would be silently ignored. */
const MODEL_ONLY: Array<[keyof EvalCommandOptions, string]> = [
  ["temperature", "--temperature"],
  ["topP", "--top-p"],
  ["topK", "--top-k"],
  ["maxTokens", "--max-tokens"],
  ["samplingSeed", "--sampling-seed"],
  ["chatTemplateKwargs", "--chat-template-kwargs"],
  ["timeout", "--timeout"],
  ["maxReplyMb", "--max-reply-mb"],
  ["httpClient", "--http-client"],
  ["maxRetries", "--max-retries"],
  ["recoverTextToolCalls", "--recover-text-tool-calls"],
  ["apiKey", "--api-key"],
  ["label", "--label"],
];

/** Options a suite takes from its own rows (`--suite` runs every row as the suite file says). */
const SUITE_DEFINED: Array<[keyof EvalCommandOptions, string]> = [
  ["env", "--env"],
  ["agent", "--agent"],
  ["n", "--n"],
  ["seed", "--seed"],
  ["split", "--split"],
  ["config", "--config"],
  ["samples", "--samples"],
  ["numTrials", "--num-trials"],
  ["userModel", "--user-model"],
  ["judgeModel", "--judge-model"],
  ["userChatTemplateKwargs", "--user-chat-template-kwargs"],
  ["judgeChatTemplateKwargs", "--judge-chat-template-kwargs"],
  ["resume", "--resume"],
  ["keepErrored", "--keep-errored"],
  ["runId", "--run-id"],
  ["workers", "--workers"],
];

/**
 * Cross-checks the options against each other before anything runs: a flag that the chosen mode would
 * ignore (sampling with a scripted agent, --env with --suite, --data-dir without --suite) is refused
 * rather than dropped, since a silently ignored flag makes a different experiment than the one asked for.
 */
export function checkEvalOptions(options: EvalCommandOptions): void {
  const given = (pairs: Array<[keyof EvalCommandOptions, string]>) => pairs.filter(([key]) => options[key] !== undefined).map(([, flag]) => flag);
  const scripted = (options.model ?? []).length === 0;
  if (scripted) {
    const ignored = given(MODEL_ONLY);
    // --no-preflight also skips the --user-model/--judge-model servers' check.
    if (options.preflight === false && !options.userModel && !options.judgeModel) ignored.push("--no-preflight");
    if (ignored.length > 0)
      throw new UsageError({
        code: "OPTION_CONFLICT",
        message: `${ignored.join(", ")} ${ignored.length > 1 ? "apply" : "applies"} only to a model behind a server (--model); a scripted agent plays without ${ignored.length > 1 ? "them" : "it"}: drop ${ignored.length > 1 ? "them" : "it"} or pass --model`,
      });
  }
  if (options.keepErrored && !options.resume)
    throw new UsageError({
      code: "OPTION_CONFLICT",
      message: "--keep-errored applies to --resume (a new run has no errored episodes to keep); add --resume or drop it",
    });
  if (options.suite) {
    const ignored = given(SUITE_DEFINED);
    if (ignored.length > 0)
      throw new UsageError({
        code: "OPTION_CONFLICT",
        message: `--suite ${options.suite} runs the environments, tasks and agents its rows name; drop ${ignored.join(", ")}, or drop --suite to run --env`,
      });
  } else if (options.dataDir !== undefined) {
    throw new UsageError({
      code: "OPTION_CONFLICT",
      message: '--data-dir is read by --suite seed-card only; for one environment pass --config \'{"data_dir": "DIR"}\'',
    });
  }
}

export async function runEvalCommand(options: EvalCommandOptions, io: CliIo): Promise<number> {
  checkEvalOptions(options);
  if (options.out !== undefined) requireOutputDirectory("--out", options.out);
  const models = modelSpecs(options);
  if (options.suite) {
    await checkServers(models, options, io);
    return runSuiteForCli(
      {
        suite: options.suite,
        models,
        dataDir: options.dataDir,
        out: options.out,
        quiet: options.quiet,
        concurrency: options.concurrency,
        ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
      },
      io,
    );
  }
  const rows = evaluationRows(options);
  const out = options.out ?? "runs";
  // Usage first (agents, counts, run directories), then the network: a typo never waits on a server.
  await checkEvaluation({ rows, models, out, runId: options.runId, resume: options.resume });
  await checkServers(models, options, io);
  const signal = io.interrupts?.();
  const summaries = await runEvaluation({
    rows,
    models,
    out,
    concurrency: options.concurrency,
    workers: options.workers ?? defaultWorkers(),
    resume: options.resume,
    ...(options.keepErrored ? { keepErrored: true } : {}),
    runId: options.runId,
    quiet: options.quiet,
    progress: io.stderr as NodeJS.WritableStream,
    ...(signal ? { signal } : {}),
  });
  return finishRuns(summaries, io, signal?.aborted ?? false, options.json ?? false);
}

export function registerEval(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("eval")
    .description(
      "Run agents over environments: a model behind an OpenAI-compatible server (--base-url, --model), or with no model the built-in scripted agents.",
    )
    .option("--env <ids>", "comma-separated environment ids (toolgym list envs)", parseText("--env"))
    .option("--agent <id>", "scripted agent (default: the environment's oracle; toolgym list agents)", parseText("--agent"))
    .option("--n <n>", `tasks per environment, or all (default: every task of a fixed dataset's split, else ${DEFAULT_N})`, parseTaskCount)
    .option("--seed <seed>", "seed of the task set and of the trials (default 0; tau2 envs: 300, as tau2's runner)", parseInteger("--seed", { min: 0 }))
    .option("--split <split>", "task split", parseText("--split"))
    .option("--config <json|file>", "environment config: JSON, or a .json/.yaml file holding it", parseConfigOption("--config"))
    .option("--user-model <url#name>", "tau2: the simulated user's model, URL#NAME (default: a scripted user)", parseText("--user-model"))
    .option("--judge-model <url#name>", "tau2: the NL_ASSERTION judge's model, URL#NAME (default: none; such episodes are partial)", parseText("--judge-model"))
    .option(
      "--user-chat-template-kwargs <json>",
      "tau2: chat_template_kwargs sent with every simulated-user request (tau2 sends none)",
      parseJson("--user-chat-template-kwargs", { object: true, example: '{"enable_thinking": false}' }),
    )
    .option(
      "--judge-chat-template-kwargs <json>",
      "tau2: chat_template_kwargs sent with every judge request (tau2 sends none)",
      parseJson("--judge-chat-template-kwargs", { object: true, example: '{"enable_thinking": false}' }),
    )
    .option("--base-url <url>", "OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (repeat for replicas)", collectText("--base-url"))
    .option("--model <name>", "model id the server serves, or LABEL=URL[,URL...]#NAME (repeatable)", collectText("--model"))
    .option("--label <label>", "model label in the run directory name (default: from --model)", parseText("--label"))
    .option("--api-key <key>", "API key (default: $OPENAI_API_KEY); never written to files or logs", parseText("--api-key"))
    .option("--no-preflight", "skip the GET <base-url>/models check before the first episode")
    .option("--concurrency <c>", "episodes in flight (default 64)", parseInteger("--concurrency", { min: 1, max: 4096 }))
    .option(
      "--workers <n>",
      `worker threads playing episodes (default: cores - 1 = ${defaultWorkers()}, at most ${MAX_WORKERS}); 1 plays them in the main thread`,
      parseInteger("--workers", { min: 1, max: MAX_WORKERS }),
    )
    .option(
      "--num-trials <k>",
      "trials per task (default 1); tau2 envs seed each from --seed as tau2 does and report pass^1..pass^K",
      parseInteger("--num-trials", { min: 1 }),
    )
    .option("--samples <k>", "older name of --num-trials", parseInteger("--samples", { min: 1 }))
    .option("--temperature <t>", "sampling temperature", parseNumber("--temperature", { min: 0 }))
    .option("--top-p <p>", "nucleus sampling", parseNumber("--top-p", { above: 0, max: 1 }))
    .option(
      "--top-k <k>",
      "top-k sampling (vLLM, SGLang; -1 disables)",
      parseInteger("--top-k", { min: -1 }, [{ value: 0, reason: "pass -1 to disable top-k, or a k of 1 or more" }]),
    )
    .option("--max-tokens <n>", "maximum tokens per model turn", parseInteger("--max-tokens", { min: 1 }))
    .option("--sampling-seed <seed>", "base seed of the per-request sampling seeds", parseInteger("--sampling-seed", { min: 0 }))
    .option(
      "--chat-template-kwargs <json>",
      `chat template kwargs, e.g. '{"enable_thinking": false}'`,
      parseJson("--chat-template-kwargs", { object: true, example: '{"enable_thinking": false}' }),
    )
    .option("--max-turns <t>", "turn limit per episode (default: the environment's)", parseInteger("--max-turns", { min: 1 }))
    .option(
      "--timeout <seconds>",
      "per-request time-out (default 180); a call fails after two time-outs, so a hung server fails its episode within minutes",
      parseNumber("--timeout", { above: 0 }),
    )
    .option(
      "--max-reply-mb <mb>",
      "largest model reply accepted, in MiB (default 4); a longer one ends the episode as reply_too_large, the model's failure",
      parseNumber("--max-reply-mb", { above: 0, max: 1024 }),
    )
    .option(
      "--http-client <client>",
      "undici (default: pooled, fastest) or openai (the official openai npm client)",
      parseChoice("--http-client", ["undici", "openai"]),
    )
    .option(
      "--max-retries <n>",
      "retries of a failing model call before the episode is recorded as errored (default 6)",
      parseInteger("--max-retries", { min: 0, max: 100 }),
    )
    .option(
      "--recover-text-tool-calls",
      "turn hermes <tool_call> text left in a reply's content into tool calls (default: on, except tau2 envs, whose runner keeps it as text)",
    )
    .option("--no-recover-text-tool-calls", "keep <tool_call> text in a reply's content as text")
    .option("--out <dir>", "root of the run directories (default runs)", parseText("--out"))
    .option("--resume", "continue the newest run with the same options: scored episodes are kept; errored and unplayed ones are played")
    .option("--keep-errored", "with --resume: keep the run's errored episodes instead of playing them again")
    .option("--run-id <id>", "run id (directory name) to create or, with --resume, to continue", parseText("--run-id"))
    .option("--quiet", "no progress bar")
    .option("--json", "print the run summaries (summary.json of each run) as a JSON array on stdout instead of the table")
    .option("--suite <name|file>", "run a suite: seed-card, quick, an environment id, or a .json/.yaml file (toolgym list suites)", parseText("--suite"))
    .option("--data-dir <dir>", "with --suite seed-card: directory holding the official dev files", parseText("--data-dir"))
    .action(async (options: EvalCommandOptions) => setExitCode(await runEvalCommand(options, io)));
}
