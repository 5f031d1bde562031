import type { JsonValue } from "../src/core/index.ts";
import { generationPath, openRunDirectory, taskSetHash, type GenerationPath, type ResultRecord } from "../src/eval/suites/run-directory.ts";

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
  turns?: number;
  errored?: boolean;
}

/**
 * Writes a run directory in the shared run format from known per-episode values, the way the harness
 * would (metadata "running" → results appended → "complete").
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
  const writer = openRunDirectory({
    root: options.root,
    metadata: {
      env: { id: env, version: "1", split: "eval", config: options.config ?? {}, seed, n, samples: 1, mode: null, protocol: "tools" },
      benchmark: options.benchmark,
      metrics: options.metrics,
      model: { label: options.label, name: options.name ?? `org/${options.label}`, baseUrls: ["http://127.0.0.1:8000/v1"] },
      agent: { kind: "openai", id: "openai" },
      generation: options.generation ?? modelGeneration(),
      taskSetHash: taskSetHash(env, "eval", seed, n),
    },
  });
  options.episodes.forEach((episode, index) => {
    const id = `${env}/eval/${seed}/${index}#0`;
    const record: ResultRecord = {
      example_id: index,
      sample: 0,
      id,
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
      info: { timing: { startedAt: "2026-01-01T00:00:00.000Z", durationMs: 10 } },
    };
    writer.append(record);
  });
  writer.complete();
  return writer.directory;
}

/** Runs the CLI in-process and captures what it writes to stdout and stderr. */
export async function runCli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import("../src/cli/main.ts");
  let stdout = "";
  let stderr = "";
  const writeOut = process.stdout.write.bind(process.stdout);
  const writeErr = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += String(chunk)), true)) as typeof process.stderr.write;
  try {
    const code = await main(argv);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = writeOut;
    process.stderr.write = writeErr;
  }
}
