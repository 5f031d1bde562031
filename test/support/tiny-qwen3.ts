import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, modelServerCommand } from "../../src/pipeline/processes.ts";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * A tiny Qwen3 model directory fine-tuned to emit hermes tool calls (scripts/make-tiny-qwen3.py
 * --tool-call-sft), created once per process under the OS temp dir. TOOLGYM_TINY_QWEN3_DIR names a directory
 * to build once and reuse across runs (local development).
 */
export function tinyQwen3Dir(python: string): string {
  const directory = process.env.TOOLGYM_TINY_QWEN3_DIR ?? join(tmpdir(), `toolgym-tiny-qwen3-${process.pid}`);
  if (!existsSync(join(directory, "model.safetensors"))) {
    const made = spawnSync(python, [join(ROOT, "scripts/make-tiny-qwen3.py"), directory, "--tool-call-sft"], { encoding: "utf8" });
    if (made.status !== 0) throw new Error(`make-tiny-qwen3.py failed: ${made.stderr.slice(-2000)}`);
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
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
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
