import { tau2Watch } from "./signatures.ts";
import { readFileSync } from "node:fs";
import { z } from "zod";
import {
  DataError,
  UsageError,
  defineEnvironment,
  type EnvironmentDefinition,
  type JsonValue,
  type ReplayRequest,
  type RewardBreakdown,
  type ToolSpec,
  type Trajectory,
} from "../../core/index.ts";
import { standardAcceptance } from "../_kit/acceptance.ts";
import { parsePythonJson } from "../../python-semantics/index.ts";
import { readJsonAsset } from "./data.ts";
import { domainIds, findTask, getDomain } from "./domains.ts";
import { Tau2Episode, scoreEpisode } from "./episode.ts";
import type { NlJudge, TerminationReason } from "./evaluate.ts";
import type { DomainBundle } from "./domains.ts";
import { tau2SftExporter } from "./export.ts";
import { createNlJudge } from "./judge.ts";
import { parseModelAddress } from "./llm.ts";
import { NOISE_LEVELS, TRAINING_PILOTS, tau2Policies, type Tau2EnvTask } from "./policies.ts";
import { replayCalls, type ReplayInput } from "./replay.ts";
import { tau2ResultsExporter } from "./results-file.ts";
import { tau2MessagesFromRecord } from "./record.ts";
import { TAU2_MAX_RETRIES, simulationRaised, tau2Summary } from "./summary.ts";
import { TAU2_DEFAULT_SEED, tau2TrialSeeds } from "./trials.ts";
import { createLlmUser, createScriptedUser } from "./user.ts";
import { rewardBasis } from "./types.ts";

/**
 * Builds one tau2 domain as a toolgym environment. The task list and splits come from tau2's task files;
 * `user_model` (URL#NAME) plays the customer with tau2's simulator prompt, otherwise a scripted customer
 * does; `judge_model` scores NL_ASSERTION.
 */
const configSchema = z.strictObject({
  user_model: z.string().nullable().default(null),
  judge_model: z.string().nullable().default(null),
  /** Cap on each simulated-user and judge reply (tokens); null: the server's default. */
  user_max_tokens: z.number().int().min(1).nullable().default(null),
  max_steps: z.number().int().min(2).default(200),
  max_errors: z.number().int().min(1).default(10),
  /** toolgym's opt-in, not tau2's: the agent's `###STOP###` ends the run (tau2 lets only the user end it). */
  agent_stop: z.boolean().default(false),
  /**
   * How the agent reaches the customer: "message" (tau2's leaderboard protocol, plain messages go to the user
   * simulator) or "tool" (toolgym's training protocol: the tool send_message_to_user returns the customer's reply).
   */
  customer: z.enum(["message", "tool"]).default("message"),
  /** Sent as `chat_template_kwargs` with every user-simulator (judge) request; tau2 sends none. */
  user_chat_template_kwargs: z.record(z.string(), z.unknown()).nullable().default(null),
  judge_chat_template_kwargs: z.record(z.string(), z.unknown()).nullable().default(null),
});
export type Tau2Config = z.infer<typeof configSchema>;

const toolSchemas = (domain: string, side: "assistant" | "user"): ToolSpec[] =>
  (readJsonAsset<Record<string, Record<string, ToolSpec[]>>>("tool_schemas.json")[domain]?.[side] ?? []) as ToolSpec[];

function readCalls(path: string): ReplayInput {
  let value: unknown;
  try {
    value = parsePythonJson(readFileSync(path, "utf8"));
  } catch (error) {
    throw new DataError({
      code: "TAU2_CALLS_INVALID",
      file: path,
      message: `cannot read the calls file as JSON (${(error as Error).message}); give {tool_calls: [{name, arguments}], assistant_texts: [string]}`,
    });
  }
  const input = value as ReplayInput;
  if (!input || !Array.isArray(input.tool_calls))
    throw new DataError({ code: "TAU2_CALLS_INVALID", file: path, message: "needs a tool_calls list of {name, arguments}" });
  return input;
}

function publicResult(output: ReturnType<typeof replayCalls>): JsonValue {
  const { tool_results, db_hash, user_db_hash, reward, reward_info, partial } = output;
  return { tool_results, db_hash, user_db_hash, reward, reward_info, partial } as unknown as JsonValue;
}

/** `toolgym replay tau2_<domain> --task ID --calls FILE` and `toolgym replay tau2 --cases FILE.jsonl`. */
function replayHook(domain: string) {
  return async (request: ReplayRequest) => {
    if (request.cases) {
      const lines = readFileSync(request.cases, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "");
      return {
        lines: lines.map((line, position) => {
          let item: ReplayInput & { case_id?: string; domain?: string; task_id?: string };
          try {
            // json.loads' types for the calls' arguments (`2.0` stays a float), as tau2 read them.
            item = parsePythonJson(line) as unknown as typeof item;
          } catch (error) {
            throw new DataError({ code: "JSON_INVALID", file: request.cases, line: position + 1, message: `not valid JSON (${(error as Error).message})` });
          }
          if (!item.domain || !item.task_id)
            throw new DataError({ code: "TAU2_CASE_INVALID", file: request.cases, line: position + 1, message: "a case needs domain and task_id" });
          return { case_id: item.case_id ?? null, ...(publicResult(replayCalls(item.domain, item.task_id, item)) as object) } as JsonValue;
        }),
      };
    }
    if (!request.task)
      throw new UsageError({ code: "REPLAY_INPUT_MISSING", message: `tau2_${domain} replay needs --task ID (a task id of the domain's tasks file)` });
    if (!request.calls)
      throw new UsageError({ code: "REPLAY_INPUT_MISSING", message: `tau2_${domain} replay needs --calls FILE with {tool_calls, assistant_texts}` });
    return publicResult(replayCalls(domain, request.task, readCalls(request.calls)));
  };
}

function judgeFor(settings: Tau2EnvTask["settings"], signal?: AbortSignal): NlJudge | null {
  return settings.judge_model
    ? createNlJudge(parseModelAddress(settings.judge_model, "judge_model"), {
        maxTokens: settings.user_max_tokens,
        chatTemplateKwargs: settings.judge_chat_template_kwargs,
        ...(signal ? { signal } : {}),
      })
    : null;
}

/**
 * `toolgym rescore`: tau2's evaluation of the recorded message list (as tau2's `evaluate_trajectories`
 * re-grades a results file), NL assertions through the config's judge.
 */
async function rescoreRecord(bundle: DomainBundle, envTask: Tau2EnvTask, trajectory: Trajectory): Promise<RewardBreakdown> {
  const diagnostics = (trajectory.reward?.diagnostics ?? trajectory.diagnostics ?? {}) as Record<string, JsonValue>;
  const messages = diagnostics.tau2_messages;
  const termination = diagnostics.tau2_termination;
  if (!Array.isArray(messages) || typeof termination !== "string")
    throw new DataError({
      code: "TAU2_RECORD_MISSING",
      message: `episode ${trajectory.id} has no tau2 message record (tau2_messages, tau2_termination); runs written before toolgym kept it cannot be re-graded, run the evaluation again`,
    });
  const counts = { steps: Number(diagnostics.steps ?? 0), errors: Number(diagnostics.tool_errors ?? 0) };
  return scoreEpisode(
    { bundle, task: envTask.task, judge: judgeFor(envTask.settings) },
    // The calls' exact arguments (`arguments_json`): results.jsonl's plain values lost Python's floats.
    tau2MessagesFromRecord(messages),
    termination as TerminationReason,
    counts,
  );
}

export function defineTau2Environment(options: { domain: string; title: string; defaultSplit: string; description: string; seedOrder?: number }) {
  const { domain } = options;
  if (!domainIds().includes(domain)) throw new Error(`tau2 domain ${domain} is not registered`);
  const bundle = () => getDomain(domain);
  const splits = Object.keys(bundle().splits());
  const definition: EnvironmentDefinition<Tau2Config, Tau2EnvTask> = defineEnvironment<Tau2Config, Tau2EnvTask>({
    id: `tau2_${domain}`,
    version: "1",
    title: options.title,
    family: "tau2",
    description: options.description,
    protocol: "tools",
    splits,
    defaultSplit: options.defaultSplit,
    configSchema,
    // tau2 types a tool's arguments as its pydantic signatures do and answers bad ones with Python's TypeError
    // texts, inside the conversation it grades: the environment checks them, not the driver.
    argumentPolicy: "environment",
    externalConfig: { user_model: "model", judge_model: "model" },
    // GRPO rows train under the customer-as-a-tool protocol: TRL's tool loop cannot carry plain messages.
    trainingConfig: { customer: "tool" },
    maxTurns: (task) => task.settings.max_steps,
    taskCount: ({ split }) => bundle().splits()[split]?.length ?? 0,
    taskIndex: ({ split }, taskId) => {
      const index = bundle().splits()[split]?.indexOf(taskId) ?? -1;
      return index === -1 ? undefined : index;
    },
    generate({ split, index, config }) {
      const ids = bundle().splits()[split];
      if (!ids || ids.length === 0)
        throw new UsageError({ code: "SPLIT_UNKNOWN", message: `tau2_${domain} has no split '${split}'; splits: ${splits.join(", ")}` });
      const task = findTask(bundle(), ids[index % ids.length] as string);
      return {
        domain,
        split,
        task,
        settings: {
          user_model: config.user_model,
          judge_model: config.judge_model,
          user_max_tokens: config.user_max_tokens,
          max_steps: config.max_steps,
          max_errors: config.max_errors,
          agent_stop: config.agent_stop,
          customer: config.customer,
          user_chat_template_kwargs: config.user_chat_template_kwargs,
          judge_chat_template_kwargs: config.judge_chat_template_kwargs,
        },
      };
    },
    publicView: (task) => ({ domain, task_id: task.task.id, reward_basis: rewardBasis(task.task) }),
    solution: (task) => (task.task.evaluation_criteria ?? null) as unknown as JsonValue,
    // What the agent must discover or do, never be told: the gold calls with their arguments and the judge's assertions.
    secrets: (task) => [
      ...(task.task.evaluation_criteria?.actions ?? []).map((action) => JSON.stringify({ name: action.name, arguments: action.arguments })),
      ...(task.task.evaluation_criteria?.nl_assertions ?? []),
    ],
    start(envTask, context) {
      const { settings, task } = envTask;
      const userTools = toolSchemas(domain, "user");
      // tau2 gives the trial's seed to the user model; a run without trials is tau2's first trial of its default seed.
      const seed = context?.seed ?? tau2TrialSeeds(TAU2_DEFAULT_SEED, 1)[0];
      // The scripted customer asks the episode whether its goal holds, as tau2's user reads its own state.
      const started: { episode?: Tau2Episode } = {};
      // Closing the episode (a server's session deleted, expired or disconnected) aborts its model requests in flight.
      const closing = new AbortController();
      const user = settings.user_model
        ? createLlmUser({
            address: parseModelAddress(settings.user_model, "user_model"),
            task,
            tools: userTools,
            episodeKey: `${domain}/${envTask.split}/${task.id}/${context?.trial ?? 0}`,
            history: task.initial_state?.message_history ?? [],
            seed,
            maxTokens: settings.user_max_tokens,
            chatTemplateKwargs: settings.user_chat_template_kwargs,
            signal: closing.signal,
          })
        : createScriptedUser(task, { userTools: userTools.map((tool) => tool.function.name), goalMet: () => started.episode?.goalMet() ?? false });
      const judge = judgeFor(settings, closing.signal);
      const episode = new Tau2Episode({
        bundle: bundle(),
        task,
        user,
        judge,
        tools: toolSchemas(domain, "assistant"),
        maxSteps: settings.max_steps,
        maxErrors: settings.max_errors,
        agentStop: settings.agent_stop,
        customerTool: settings.customer === "tool",
        envId: `tau2_${domain}`,
        closing,
      });
      started.episode = episode;
      return episode;
    },
    policies: tau2Policies,
    audit: {
      components: ["DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION"],
      policies: tau2Policies.map((policy) => policy.id),
      acceptance: standardAcceptance({
        oracle: "oracle",
        // mock's update_task_with_user_tools cannot reach 1 in tau2 itself (its gold DB keeps the
        // notification unread while its assertion wants it read), so a domain's oracle may miss one task.
        oracleMin: 0.85,
        pilots: [],
        pilotMax: 1,
        below: tau2Policies.filter((policy) => policy.kind === "pilot").map((policy) => [policy.id, "oracle"] as [string, string]),
        // The training protocol's pilots steer the customer; none may earn more than a conversation in which the agent does nothing.
        notAbove: TRAINING_PILOTS.map((pilot) => [pilot, "do_nothing_stop"] as [string, string]),
        // More noise, less reward: the noisy oracles' means fall strictly with epsilon.
        monotone: ["oracle", ...NOISE_LEVELS.map((epsilon) => `noisy_oracle_${epsilon}`)],
      }),
      // The training protocol (the customer as a tool), under which the training pilots steer the customer.
      configs: [{ customer: "tool" }],
    },
    watch: tau2Watch(domain),
    metrics: ["reward", "pass", "partial"],
    replay: replayHook(domain),
    exports: { "tau2-sft": tau2SftExporter(() => toolSchemas(domain, "assistant")), "tau2-results": tau2ResultsExporter(domain) },
    summary: tau2Summary,
    // tau2's runner records an LLM error (a context overflow included) as an infrastructure error after its retries.
    modelFailures: "errored",
    rescore: ({ task, trajectory }) => rescoreRecord(bundle(), task, trajectory),
    trialSeeds: tau2TrialSeeds,
    defaultSeed: TAU2_DEFAULT_SEED,
    simulationRetries: { retries: TAU2_MAX_RETRIES, raised: simulationRaised },
    // tau2's `generate` (utils/llm_utils.py): temperature 0.0 (config DEFAULT_LLM_TEMPERATURE_AGENT), tool_choice
    // "auto" whenever tools are sent, and the reply's content kept as text even when it holds <tool_call> blocks.
    modelRequest: { temperature: 0, toolChoice: "auto", recoverTextToolCalls: false },
  });
  return definition;
}
