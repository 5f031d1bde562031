import { createHash } from "node:crypto";
import { DataError, type ExportEpisode, type ExportRun, type JsonValue, type RunExporter } from "../../core/index.ts";
import { PythonFloat, parsePythonJson, pythonJsonDumps } from "../../python-semantics/index.ts";
import { readAsset } from "./data.ts";
import { findTask, getDomain } from "./domains.ts";
import { PARTICIPANT_FIELDS } from "./record.ts";
import { EVALUATION_ERROR } from "./summary.ts";
import type { Tau2Task } from "./types.ts";

/**
 * `toolgym export RUN --format tau2-results`: the run as the `results.json` tau2's runner writes
 * (`tau2.data_model.simulation.Results`: timestamp, info, tasks, simulations), so tau2's own tools load,
 * view and re-grade it. Models are dumped as pydantic dumps them (every field, declaration order, defaults
 * filled in) and the file is written as tau2's checkpoint writer writes it: Python's `json.dump(indent=2)`,
 * ASCII escapes, float repr, no final newline. What toolgym does not know is null (costs, provider data).
 */
type Row = Record<string, JsonValue>;

const asRow = (value: unknown): Row => (value && typeof value === "object" && !Array.isArray(value) ? (value as Row) : {});
const orNull = (value: unknown): JsonValue => (value === undefined ? null : (value as JsonValue));

/** tau2's `get_now()` layout (ISO, microseconds, no zone) for a toolgym ISO time. */
function tau2Time(date: Date): string {
  return `${date.toISOString().slice(0, 23)}000`;
}

/** A value Python holds as a float (`1.0`, not `1`), for the fields tau2's models declare `float`. */
function float(value: unknown): JsonValue {
  return typeof value === "number" ? (new PythonFloat(value) as unknown as JsonValue) : orNull(value);
}

/** A message of a task's `message_history` as pydantic dumps it (the file's turn index kept; timestamps are load time in tau2). */
function historyMessage(message: Row, now: string): Row {
  if (message.role === "tool")
    return {
      id: orNull(message.id),
      role: "tool",
      content: orNull(message.content),
      requestor: message.requestor ?? "assistant",
      error: message.error ?? false,
      turn_idx: orNull(message.turn_idx),
      timestamp: message.timestamp ?? now,
    };
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.map(asRow) : null;
  return {
    role: orNull(message.role),
    content: orNull(message.content),
    tool_calls:
      calls &&
      calls.map((call) => ({ id: call.id ?? "", name: orNull(call.name), arguments: orNull(call.arguments), requestor: call.requestor ?? "assistant" })),
    is_audio: message.is_audio ?? false,
    turn_idx: orNull(message.turn_idx),
    timestamp: message.timestamp ?? now,
    cost: float(message.cost),
    usage: orNull(message.usage),
    raw_data: orNull(message.raw_data),
    generation_time_seconds: float(message.generation_time_seconds),
    ...PARTICIPANT_FIELDS,
  };
}

function functionCall(value: unknown): Row {
  const call = asRow(value);
  return { env_type: orNull(call.env_type), func_name: orNull(call.func_name), arguments: orNull(call.arguments) };
}

function instructions(value: unknown): JsonValue {
  if (typeof value === "string") return value;
  const row = asRow(value);
  return {
    domain: orNull(row.domain),
    reason_for_call: orNull(row.reason_for_call),
    known_info: orNull(row.known_info),
    unknown_info: orNull(row.unknown_info),
    task_instructions: orNull(row.task_instructions),
  };
}

function criteria(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  const row = asRow(value);
  const list = (items: unknown, map: (item: Row) => Row) => (Array.isArray(items) ? items.map((item) => map(asRow(item))) : null);
  return {
    actions: list(row.actions, (action) => ({
      action_id: orNull(action.action_id),
      requestor: action.requestor ?? "assistant",
      name: orNull(action.name),
      arguments: orNull(action.arguments),
      info: orNull(action.info),
      compare_args: orNull(action.compare_args),
    })),
    env_assertions: list(row.env_assertions, (assertion) => ({
      ...functionCall(assertion),
      assert_value: assertion.assert_value ?? true,
      message: orNull(assertion.message),
    })),
    communicate_info: orNull(row.communicate_info),
    nl_assertions: orNull(row.nl_assertions),
    // tau2's default basis when a task names none.
    reward_basis: row.reward_basis ?? ["DB", "COMMUNICATE"],
  };
}

/** A task as `Task.model_dump()` writes it. */
export function taskJson(task: Tau2Task, now: string): Row {
  const row = task as unknown as Row;
  const description = row.description === undefined || row.description === null ? null : asRow(row.description);
  const state = row.initial_state === undefined || row.initial_state === null ? null : asRow(row.initial_state);
  const scenario = asRow(row.user_scenario);
  const data = state && state.initialization_data ? asRow(state.initialization_data) : null;
  return {
    id: orNull(row.id),
    description: description && {
      purpose: orNull(description.purpose),
      relevant_policies: orNull(description.relevant_policies),
      notes: orNull(description.notes),
    },
    user_scenario: { persona: orNull(scenario.persona), instructions: instructions(scenario.instructions) },
    ticket: orNull(row.ticket),
    initial_state: state && {
      initialization_data: data && { agent_data: orNull(data.agent_data), user_data: orNull(data.user_data) },
      initialization_actions: Array.isArray(state.initialization_actions) ? state.initialization_actions.map(functionCall) : null,
      message_history: Array.isArray(state.message_history) ? state.message_history.map((message) => historyMessage(asRow(message), now)) : null,
    },
    evaluation_criteria: criteria(row.evaluation_criteria),
    issues: orNull(row.issues),
    required_documents: orNull(row.required_documents),
    user_tools: orNull(row.user_tools),
  };
}

/** The reward info with tau2's float fields as floats. */
function rewardInfo(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  const info = asRow(value);
  const checks = (items: unknown, field: string) =>
    Array.isArray(items) ? items.map((item) => ({ ...asRow(item), [field]: float(asRow(item)[field]) })) : orNull(items);
  const breakdown = info.reward_breakdown === null || info.reward_breakdown === undefined ? null : asRow(info.reward_breakdown);
  return {
    reward: float(info.reward),
    db_check: info.db_check ? { ...asRow(info.db_check), db_reward: float(asRow(info.db_check).db_reward) } : orNull(info.db_check),
    env_assertions: checks(info.env_assertions, "reward"),
    action_checks: checks(info.action_checks, "action_reward"),
    nl_assertions: orNull(info.nl_assertions),
    communicate_checks: orNull(info.communicate_checks),
    reward_basis: orNull(info.reward_basis),
    reward_breakdown: breakdown && Object.fromEntries(Object.entries(breakdown).map(([name, score]) => [name, float(score)])),
    info: orNull(info.info),
  };
}

/**
 * A simulation scored without its NL assertions (no judge): its reward leaves NL_ASSERTION out (the
 * recorded `reward_basis` says so), and `info.nl` says why, for anyone reading or re-grading the file.
 */
function notComputedNote(info: JsonValue): JsonValue {
  if (info === null || typeof info !== "object" || Array.isArray(info)) return info;
  const details = asRow(info.info);
  return {
    ...info,
    info: {
      ...details,
      nl: {
        note: "NL_ASSERTION not computed: toolgym ran without a judge model (--judge-model); this reward covers the rest of the task's basis and toolgym counts the simulation as no pass",
      },
    },
  };
}

/** A stable UUID-shaped id for an episode of a run (tau2 draws uuid4s; a re-export gives the same file). */
function simulationId(runId: string, episodeId: string): string {
  const hex = createHash("sha256").update(`${runId}\u0000${episodeId}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

interface EpisodeRecord {
  taskId: string;
  termination: string;
  rewardInfo: unknown;
  messages: JsonValue[];
}

/** What tau2's results need from an episode's trajectory (tau2-core records them in the reward diagnostics). */
function episodeRecord(episode: ExportEpisode): EpisodeRecord {
  const trajectory = asRow(episode.trajectory);
  const diagnostics = asRow(asRow(trajectory.reward).diagnostics);
  const taskId = asRow(trajectory.diagnostics).tau2_task_id;
  // An episode whose model server failed has no reward and may have no record: tau2's infrastructure error.
  if (episode.status === "errored" && typeof taskId === "string" && !Array.isArray(diagnostics.tau2_messages))
    return { taskId, termination: "infrastructure_error", rewardInfo: null, messages: [] };
  if (typeof taskId !== "string" || !Array.isArray(diagnostics.tau2_messages))
    throw new DataError({
      code: "TAU2_RECORD_MISSING",
      message: `episode ${episode.id ?? episode.exampleId} has no tau2 message record (tau2_task_id, tau2_messages); runs written before toolgym kept it cannot be exported as tau2-results, run the evaluation again`,
    });
  // tau2's runner retries a simulation whose evaluation raised, then records it as an infrastructure error.
  const raised = JSON.stringify(asRow(trajectory.reward).errors ?? []).includes(EVALUATION_ERROR);
  return {
    taskId,
    termination: raised ? "infrastructure_error" : String(diagnostics.tau2_termination ?? "agent_error"),
    rewardInfo: raised ? null : diagnostics.reward_info,
    messages: (diagnostics.tau2_messages as JsonValue[]).map(exactArguments),
  };
}

/** A recorded message with each call's arguments as Python held them (`arguments_json`), for `json.dump`. */
function exactArguments(message: JsonValue): JsonValue {
  const row = asRow(message);
  if (!Array.isArray(row.tool_calls)) return message;
  const calls = row.tool_calls.map((call) => {
    const row = asRow(call);
    const exact = typeof row.arguments_json === "string" ? (parsePythonJson(row.arguments_json) as unknown as JsonValue) : row.arguments;
    return { id: orNull(row.id), name: orNull(row.name), arguments: orNull(exact), requestor: row.requestor ?? "assistant" };
  });
  return { ...row, tool_calls: calls };
}

/** Builds the `Results` object of a tau2 run's episodes (one domain per file, as tau2 writes them). */
export function resultsJson(domain: string, episodes: readonly ExportEpisode[], run: ExportRun, now = new Date()): Row {
  const metadata = run.metadata;
  const env = asRow(metadata.env);
  const config = asRow(env.config);
  const model = asRow(metadata.model);
  const agent = asRow(metadata.agent);
  const sampling = asRow(asRow(metadata.generation).sampling);
  const bundle = getDomain(domain);
  const policy = bundle.policy();
  const stamp = tau2Time(now);
  // Tasks in split order, each task's trials in order (results.jsonl holds them in the order they finished).
  const ordered = [...episodes].sort((a, b) => Number(a.exampleId ?? 0) - Number(b.exampleId ?? 0) || (a.trial ?? 0) - (b.trial ?? 0));
  const records = ordered.map((episode) => ({ episode, record: episodeRecord(episode) }));
  const taskIds = [...new Set(records.map(({ record }) => record.taskId))];
  const userModel = typeof config.user_model === "string" ? config.user_model.split("#").slice(1).join("#") : null;
  const simulations = records.map(({ episode, record }) => {
    const start = new Date(episode.startedAt ?? String(metadata.createdAt ?? now.toISOString()));
    const seconds = (episode.durationMs ?? 0) / 1000;
    const end = new Date(start.getTime() + (episode.durationMs ?? 0));
    return {
      id: simulationId(String(metadata.runId ?? ""), episode.id ?? String(episode.exampleId)),
      task_id: record.taskId,
      timestamp: tau2Time(end),
      start_time: tau2Time(start),
      end_time: tau2Time(end),
      duration: float(seconds),
      // An errored episode (the model server failed) is tau2's infrastructure error, which its metrics leave out.
      termination_reason: episode.status === "errored" ? "infrastructure_error" : record.termination,
      agent_cost: null,
      user_cost: null,
      agent_usage: null,
      reward_info: episode.metrics.partial === 1 ? notComputedNote(rewardInfo(record.rewardInfo)) : rewardInfo(record.rewardInfo),
      messages: record.messages,
      ticks: null,
      trial: episode.trial ?? 0,
      seed: episode.trialSeed ?? null,
      mode: "half_duplex",
      speech_environment: null,
      review: null,
      user_only_review: null,
      info: null,
      auth_classification: null,
      hallucination_retries_used: 0,
      hallucination_check: null,
      provider_session_id: null,
      policy,
      effect_timeline: null,
    };
  });
  const llmArgs = Object.fromEntries(Object.entries(sampling).filter(([name]) => ["temperature", "top_p", "top_k", "max_tokens"].includes(name)));
  return {
    timestamp: stamp,
    info: {
      // Not tau2's code: the toolgym version that ran it (tau2 records its own git commit here).
      git_commit: `toolgym ${String(metadata.toolgymVersion ?? "")}`.trim(),
      num_trials: typeof env.samples === "number" ? env.samples : 1,
      max_steps: typeof config.max_steps === "number" ? config.max_steps : 200,
      max_errors: typeof config.max_errors === "number" ? config.max_errors : 10,
      user_info: {
        implementation: userModel ? "user_simulator" : "toolgym_scripted_user",
        llm: userModel,
        llm_args: userModel ? {} : null,
        global_simulation_guidelines: userModel ? readAsset("user_simulator/simulation_guidelines.md") : null,
        voice_settings: null,
        persona_config: null,
      },
      agent_info: {
        implementation: agent.kind === "openai" ? "llm_agent" : `toolgym_scripted:${String(agent.id ?? "")}`,
        llm: agent.kind === "openai" ? orNull(model.name) : null,
        llm_args: agent.kind === "openai" ? llmArgs : null,
        voice_settings: null,
      },
      environment_info: { domain_name: domain, policy, tool_defs: null },
      seed: typeof env.seed === "number" ? env.seed : null,
      text_streaming_config: { chunk_by: "words", chunk_size: 1 },
      speech_complexity: null,
      audio_native_config: null,
      retrieval_config: null,
      retrieval_config_kwargs: null,
    },
    tasks: taskIds.map((id) => taskJson(findTask(bundle, id), stamp)),
    simulations,
    simulation_index: null,
  };
}

/** The exporter of one tau2 domain's runs. */
export function tau2ResultsExporter(domain: string): RunExporter {
  return {
    description: "tau2's results.json (Results: info, tasks, simulations) that tau2's own tools load, view and re-grade",
    write(episodes, run) {
      return pythonJsonDumps(resultsJson(domain, episodes, run ?? { metadata: {} }), { indent: 2, ensureAscii: true });
    },
  };
}
