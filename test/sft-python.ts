import { spawn } from "node:child_process";

/**
 * Runs a Python script without blocking the event loop (so TypeScript work can overlap with it). The
 * limit is generous: on a busy 2-core machine loading transformers alone can take a minute.
 */
export function runPython(python: string, args: string[], timeoutMs = 600_000): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, { stdio: ["ignore", "pipe", "pipe"], timeout: timeoutMs });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}
