import type { JsonValue } from "../src/core/index.ts";
import { completeRun } from "../src/eval/completion.ts";
import { RunTotals } from "../src/eval/summary.ts";
import { generationPath, taskSetHash } from "../src/runs/identity.ts";
import { digestOf } from "../src/runs/record.ts";
import type { GenerationPath, ResultRecord } from "../src/runs/schemas.ts";
import { createRun, newRunMetadata } from "../src/runs/writer.ts";

/** The generation path of a pretend vLLM run of Qwen3 (what the harness records). */
export function modelGeneration(overrides: Partial<Omit<GenerationPath, "fingerprint">> = {}): GenerationPath {
  return generationPath({
    sampling: { temperature: 0.6, top_p: 0.95, top_k: 20, max_tokens: 2048, seed: 0 },
    chatTemplateKwargs: { enable_thinking: false },
    chatTemplateHash: "sha256:2f1c0d7a6b5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a",
    maxTurns: 16,
    toolSchemasHash: "sha256:7777777777777777777777777777777777777777777777777777777777777777",
    protocol: "tools",
    onNoToolCall: "nudge",
    ...overrides,
  });
}

export interface SyntheticEpisode {
  /** Metric values; `reward` becomes the total. */
  metrics: Record<string, number>;
  /** Which of `metrics` are reward components (recorded as the trajectory's reward.components); the rest are diagnostics. */
  components?: string[];
  turns?: number;
  /** The episode's own turn limit (recorded as the trajectory's maxTurns). */
  maxTurns?: number;
  errored?: boolean;
}

/** The part of a trajectory a synthetic episode records under info.trajectory: reward components and turn limit. */
function trajectoryInfo(episode: SyntheticEpisode): { trajectory?: JsonValue } {
  const trajectory: Record<string, JsonValue> = {};
  if (episode.components && !episode.errored)
    trajectory.reward = { components: Object.fromEntries(episode.components.map((name) => [name, episode.metrics[name] ?? 0])) };
  if (episode.maxTurns !== undefined) trajectory.maxTurns = episode.maxTurns;
  return Object.keys(trajectory).length > 0 ? { trajectory } : {};
}

/**
 * Writes a run directory from known per-episode values with the writer `toolgym eval` uses: metadata
 * built by newRunMetadata and written "running" by createRun, results appended by its ResultsWriter,
 * then completeRun (metadata "complete" or "failed", summary.json). Returns the run directory.
 */
export function writeSyntheticRun(options: {
  root: string;
  benchmark: string;
  env?: string;
  label: string;
  name?: string;
  metrics: string[];
  episodes: SyntheticEpisode[];
  seed?: number;
  generation?: GenerationPath;
  config?: JsonValue;
}): string {
  const env = options.env ?? options.benchmark;
  const seed = options.seed ?? 0;
  const n = options.episodes.length;
  const metadata = newRunMetadata({
    env: { id: env, version: "1", split: "eval", config: options.config ?? {}, seed, n, samples: 1, mode: null, protocol: "tools" },
    benchmark: options.benchmark,
    metrics: options.metrics,
    model: { label: options.label, name: options.name ?? `org/${options.label}`, baseUrls: ["http://127.0.0.1:8000/v1"] },
    agent: { kind: "openai", id: "openai" },
    generation: options.generation ?? modelGeneration(),
    taskSetHash: taskSetHash(env, "eval", seed, n),
  });
  const { directory, results } = createRun(options.root, metadata);
  const totals = new RunTotals();
  options.episodes.forEach((episode, index) => {
    const record: ResultRecord = {
      example_id: index,
      sample: 0,
      id: `${env}/eval/${seed}/${index}#0`,
      task: env,
      prompt: [{ role: "user", content: `task ${index}` }],
      completion: [{ role: "assistant", content: "answer" }],
      answer: "",
      reward: episode.errored ? null : (episode.metrics.reward ?? episode.metrics[options.metrics[0] as string] ?? 0),
      metrics: episode.errored ? {} : episode.metrics,
      status: episode.errored ? "errored" : "scored",
      error: episode.errored ? { type: "ProviderError", code: "PROVIDER_FAILED", message: "HTTP 503 after 5 retries", boundary: "provider" } : null,
      turns: episode.turns ?? 3,
      termination: episode.errored ? "errored" : "finished",
      format_errors: 0,
      info: {
        timing: { startedAt: "2026-01-01T00:00:00.000Z", durationMs: 10 },
        ...trajectoryInfo(episode),
      },
    };
    results.append(record);
    totals.add(digestOf(record));
  });
  results.close();
  const identity = { dir: directory, runId: metadata.runId, env, benchmark: options.benchmark, model: options.label, total: n, resumedFrom: 0 };
  completeRun({ directory, metadata, totals, identity, notes: [] });
  return directory;
}

export { runCli } from "./support/run-cli.ts";
