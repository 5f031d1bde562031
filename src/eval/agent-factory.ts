import { UsageError, createRandom, type Agent, type AnyEnvironment, type JsonValue } from "../core/index.ts";
import { createOpenAIAgent, createProviderStats, type ProviderStats, type SamplingParams } from "../agents/openai/agent.ts";
import { ReplicaPool, redactBaseUrl } from "../agents/openai/replicas.ts";
import { getPolicies, getPolicy } from "../envs/registry.ts";
import type { RunMetadata } from "../runs/schemas.ts";
import { hasOwnTrialSeeds } from "./trials.ts";

/** Who plays the episodes of a run: a model behind an OpenAI-compatible server, or a scripted policy. */
export type ModelSpec =
  | {
      kind: "openai";
      label: string;
      name: string;
      baseUrls: string[];
      apiKey?: string;
      sampling?: SamplingParams;
      chatTemplateKwargs?: Record<string, JsonValue>;
      chatTemplateHash?: string | null;
      timeoutMs?: number;
      /** The largest reply body accepted, in bytes (default 4 MiB); a longer one ends the episode as reply_too_large. */
      maxReplyBytes?: number;
      maxRetries?: number;
      backoffMs?: number;
      fetch?: typeof fetch;
      /** HTTP client: `undici` (default) or `openai` (the official npm client). */
      client?: "undici" | "openai";
      /** `--recover-text-tool-calls` (true) or `--no-recover-text-tool-calls` (false); absent: the environment's default. */
      recoverTextToolCalls?: boolean;
    }
  | { kind: "scripted"; label?: string; policy?: string };

export interface AgentContext {
  task: unknown;
  index: number;
  sample: number;
  /** The seed of this trial (`toolgym eval --num-trials`). */
  trialSeed: number;
  episodeId: string;
  split: string;
  seed: number;
}

/** A model ready to play one environment: what the run records about it and a fresh agent per episode. */
export interface PreparedModel {
  label: string;
  metadata: Pick<RunMetadata, "model" | "agent">;
  sampling: Record<string, JsonValue> | null;
  chatTemplateKwargs: Record<string, JsonValue> | null;
  chatTemplateHash: string | null;
  createAgent(context: AgentContext): Agent;
  stats: ProviderStats | null;
  pool: ReplicaPool | null;
}

/** A label usable as a directory name. */
export function modelLabel(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^_+|_+$/g, "") || "model";
}

function scriptedPolicyFor(env: AnyEnvironment, policyId?: string) {
  if (policyId) return getPolicy(env.id, policyId);
  const policy = getPolicies(env.id).find((candidate) => candidate.kind === "genuine");
  if (!policy)
    throw new UsageError({ code: "POLICY_MISSING", message: `no genuine scripted agent for ${env.id}; name one of its scripted agents (agent id) explicitly` });
  return policy;
}

export function prepareModel(spec: ModelSpec, env: AnyEnvironment): PreparedModel {
  const ownSeeds = hasOwnTrialSeeds(env);
  if (spec.kind === "scripted") {
    const policy = scriptedPolicyFor(env, spec.policy);
    const label = spec.label ?? `scripted-${policy.id}`;
    return {
      label,
      metadata: { model: { label, name: `scripted:${policy.id}`, baseUrls: [] }, agent: { kind: "scripted", id: policy.id } },
      sampling: null,
      chatTemplateKwargs: null,
      chatTemplateHash: null,
      // An environment with its own trial seeds (tau2) gets policies whose randomness comes from the trial's seed.
      createAgent: ({ task, index, sample, trialSeed, split, seed }) =>
        policy.create({
          task,
          random: ownSeeds
            ? createRandom("policy", policy.id, split, "trial", trialSeed, index)
            : createRandom("policy", policy.id, split, seed, index, sample),
        }),
      stats: null,
      pool: null,
    };
  }
  if (ownSeeds && spec.sampling?.seed !== undefined)
    throw new UsageError({
      code: "OPTION_CONFLICT",
      message: `${env.id} sends each trial's own seed with every model request (as its benchmark does); drop --sampling-seed and set the base seed with --seed`,
    });
  // The benchmark's own request defaults (tau2: temperature 0.0, tool_choice "auto", text stays text) unless
  // the run names them; whether `<tool_call>` text was recovered is recorded with the sampling settings.
  const defaults = env.modelRequest ?? {};
  const sampling: SamplingParams = {
    ...(defaults.temperature !== undefined ? { temperature: defaults.temperature } : {}),
    ...(spec.sampling ?? {}),
  };
  const recoverTextToolCalls = spec.recoverTextToolCalls ?? defaults.recoverTextToolCalls ?? true;
  const pool = new ReplicaPool({
    baseUrls: spec.baseUrls,
    apiKey: spec.apiKey,
    timeoutMs: spec.timeoutMs,
    fetch: spec.fetch,
    client: spec.client,
    ...(spec.maxReplyBytes !== undefined ? { maxReplyBytes: spec.maxReplyBytes } : {}),
  });
  const stats = createProviderStats();
  return {
    label: spec.label,
    metadata: { model: { label: spec.label, name: spec.name, baseUrls: spec.baseUrls.map(redactBaseUrl) }, agent: { kind: "openai", id: "openai" } },
    // Recorded so the fingerprint says the request seed is the trial's (the trials' seeds are in metadata.json).
    sampling: {
      ...sampling,
      ...(ownSeeds ? { seed_per_trial: true } : {}),
      ...(defaults.toolChoice !== undefined ? { tool_choice: defaults.toolChoice } : {}),
      recover_text_tool_calls: recoverTextToolCalls,
    } as Record<string, JsonValue>,
    chatTemplateKwargs: spec.chatTemplateKwargs ?? null,
    chatTemplateHash: spec.chatTemplateHash ?? null,
    createAgent: ({ episodeId, trialSeed }) =>
      createOpenAIAgent({
        pool,
        model: spec.name,
        sampling,
        ...(ownSeeds ? { fixedSeed: trialSeed } : {}),
        ...(defaults.toolChoice !== undefined ? { toolChoice: defaults.toolChoice } : {}),
        recoverTextToolCalls,
        chatTemplateKwargs: spec.chatTemplateKwargs,
        maxRetries: spec.maxRetries,
        backoffMs: spec.backoffMs,
        episodeKey: episodeId,
        stats,
      }),
    stats,
    pool,
  };
}
