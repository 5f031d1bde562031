import type { Command } from "commander";
import { UsageError, parseConfig, type JsonValue } from "../../core/index.ts";
import { DEFAULT_EVAL_ENVIRONMENTS, getEnvironment } from "../../envs/registry.ts";
import { formatSummaryTable, modelLabel, runEvaluation, type EvaluationRow, type ModelSpec } from "../../eval/run-evaluation.ts";
import { runSuiteCommand } from "../../eval/suites/command.ts";
import { collect, parseInteger, parseJsonOption, parseNumber } from "../options.ts";

export interface EvalCommandOptions {
  env?: string;
  agent?: string;
  n?: number;
  seed: number;
  split?: string;
  config?: string;
  out?: string;
  quiet?: boolean;
  baseUrl?: string[];
  model?: string[];
  label?: string;
  apiKey?: string;
  concurrency?: number;
  samples?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTokens?: number;
  samplingSeed?: number;
  chatTemplateKwargs?: string;
  maxTurns?: number;
  timeout?: number;
  httpClient?: string;
  maxRetries?: number;
  resume?: boolean;
  runId?: string;
  suite?: string;
  dataDir?: string;
}

function httpClient(value: string): "undici" | "openai" {
  if (value === "undici" || value === "openai") return value;
  throw new UsageError({ message: `--http-client must be 'undici' or 'openai', got '${value}'` });
}

const MODEL_TARGET = /^([A-Za-z0-9][\w.-]*)=([^#]+)#(.+)$/;

/** The models to evaluate: `--model NAME` with `--base-url`, or `--model LABEL=URL[,URL…]#NAME`; none: scripted agents. */
function modelSpecs(options: EvalCommandOptions): ModelSpec[] {
  const models = options.model ?? [];
  const baseUrls = options.baseUrl ?? [];
  if (models.length === 0) {
    if (baseUrls.length > 0) throw new UsageError({ code: "MODEL_MISSING", message: "--base-url needs --model NAME (the model id the server serves)" });
    return [{ kind: "scripted", ...(options.agent ? { policy: options.agent } : {}) }];
  }
  const kwargs = parseJsonOption("--chat-template-kwargs", options.chatTemplateKwargs);
  if (kwargs !== undefined && (typeof kwargs !== "object" || kwargs === null || Array.isArray(kwargs))) {
    throw new UsageError({ message: `--chat-template-kwargs must be a JSON object, e.g. '{"enable_thinking": false}'` });
  }
  const sampling = {
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.topP !== undefined ? { top_p: options.topP } : {}),
    ...(options.topK !== undefined ? { top_k: options.topK } : {}),
    ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
    ...(options.samplingSeed !== undefined ? { seed: options.samplingSeed } : {}),
  };
  return models.map((text): ModelSpec => {
    const target = MODEL_TARGET.exec(text.trim());
    const urls = target
      ? (target[2] as string)
          .split(",")
          .map((url) => url.trim())
          .filter(Boolean)
      : baseUrls;
    if (urls.length === 0)
      throw new UsageError({ code: "BASE_URL_MISSING", message: `--model ${text}: pass --base-url URL (repeatable) or --model LABEL=URL#NAME` });
    const name = target ? (target[3] as string) : text;
    const label = target ? (target[1] as string) : (options.label ?? modelLabel(name));
    return {
      kind: "openai",
      label,
      name,
      baseUrls: urls,
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      sampling,
      ...(kwargs ? { chatTemplateKwargs: kwargs as Record<string, JsonValue> } : {}),
      ...(options.timeout !== undefined ? { timeoutMs: options.timeout * 1000 } : {}),
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      ...(options.httpClient ? { client: httpClient(options.httpClient) } : {}),
    };
  });
}

export async function runEvalCommand(options: EvalCommandOptions): Promise<number> {
  const envIds = options.env
    ? options.env
        .split(",")
        .map((id) => id.trim())
        .filter(Boolean)
    : DEFAULT_EVAL_ENVIRONMENTS;
  if (envIds.length === 0) throw new UsageError({ message: "no environment selected; pass --env ID" });
  const models = modelSpecs(options);
  const rows: EvaluationRow[] = envIds.map((id) => {
    const env = getEnvironment(id);
    return {
      env,
      config: parseConfig(env.id, env.configSchema, options.config ?? "{}"),
      split: options.split ?? env.defaultSplit,
      seed: options.seed,
      n: options.n ?? 100,
      ...(options.samples !== undefined ? { samples: options.samples } : {}),
      ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    };
  });
  const summaries = await runEvaluation({
    rows,
    models,
    out: options.out ?? "runs",
    concurrency: options.concurrency,
    resume: options.resume,
    runId: options.runId,
    quiet: options.quiet,
  });
  const directories = summaries.map(
    (summary) => `  ${summary.dir}${summary.resumedFrom > 0 ? `  (resumed: ${summary.resumedFrom} episodes were already done)` : ""}`,
  );
  process.stdout.write(`${formatSummaryTable(summaries)}\n\nruns:\n${directories.join("\n")}\n`);
  return 0;
}

export function registerEval(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("eval")
    .description(
      "Run agents over environments: a model behind an OpenAI-compatible server (--base-url, --model), or with no model the built-in scripted agents.",
    )
    .option("--env <ids>", "comma-separated environment ids")
    .option("--agent <id>", "scripted agent (default: the environment's oracle)")
    .option("--n <n>", "tasks per environment (default 100)", parseInteger("--n"))
    .option("--seed <seed>", "seed of the task set", parseInteger("--seed"), 0)
    .option("--split <split>", "task split")
    .option("--config <json>", "environment config as JSON")
    .option("--base-url <url>", "OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (repeat for replicas)", collect)
    .option("--model <name>", "model id the server serves, or LABEL=URL[,URL...]#NAME (repeatable)", collect)
    .option("--label <label>", "model label in the run directory name (default: from --model)")
    .option("--api-key <key>", "API key (default: $OPENAI_API_KEY); never written to files or logs")
    .option("--concurrency <c>", "episodes in flight (default 64)", parseInteger("--concurrency"))
    .option("--samples <k>", "samples per task (default 1)", parseInteger("--samples"))
    .option("--temperature <t>", "sampling temperature", parseNumber("--temperature"))
    .option("--top-p <p>", "nucleus sampling", parseNumber("--top-p"))
    .option("--top-k <k>", "top-k sampling (vLLM, SGLang)", parseInteger("--top-k"))
    .option("--max-tokens <n>", "maximum tokens per model turn", parseInteger("--max-tokens"))
    .option("--sampling-seed <seed>", "base seed of the per-request sampling seeds", parseInteger("--sampling-seed"))
    .option("--chat-template-kwargs <json>", `chat template kwargs, e.g. '{"enable_thinking": false}'`)
    .option("--max-turns <t>", "turn limit per episode (default: the environment's)", parseInteger("--max-turns"))
    .option("--timeout <seconds>", "per-request time-out (default 600)", parseNumber("--timeout"))
    .option("--http-client <client>", "undici (default: pooled, fastest) or openai (the official openai npm client)")
    .option("--max-retries <n>", "retries of a failing model call before the episode is recorded as errored (default 6)", parseInteger("--max-retries"))
    .option("--out <dir>", "root of the run directories (default runs)")
    .option("--resume", "continue the newest run with the same options: finished episodes are kept, the rest rerun")
    .option("--run-id <id>", "run id (directory name) to create or, with --resume, to continue")
    .option("--quiet", "no progress bar")
    .option("--suite <name|file>", "run a suite: seed-card, quick, an environment id, or a .json/.yaml file (then: toolgym report OUT --card)")
    .option("--data-dir <dir>", "with --suite seed-card: directory holding musique_ans_v1.0_dev.jsonl and dev.json")
    .action(async (options: EvalCommandOptions) => {
      if (options.suite)
        return setExitCode(
          await runSuiteCommand({
            suite: options.suite,
            models: modelSpecs(options),
            dataDir: options.dataDir,
            out: options.out,
            quiet: options.quiet,
            concurrency: options.concurrency,
          }),
        );
      setExitCode(await runEvalCommand(options));
    });
}
