import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import { requirePython } from "./support/qwen3.ts";

/**
 * python/train_grpo.py without --server-url starts `toolgym serve` itself; that server must stop with the
 * script on every exit path (issue 36 finding 12: it was left running, orphaned, on all of them). Each case
 * runs the script's own `start_server` with the real server, ends the script one way, and then looks for
 * any process still carrying the case's token.
 */
const root = resolve(import.meta.dirname, "..");
const DRIVER = `
import sys, time
sys.path.insert(0, "python")
import train_grpo
train_grpo.start_server(sys.argv[1], sys.argv[2])
print("started", flush=True)
sys.stdin.readline()
if sys.argv[3] == "exit":
    sys.exit(0)
if sys.argv[3] == "raise":
    raise RuntimeError("the training failed")
time.sleep(600)
`;

/** Processes whose environment holds TOOLGYM_TOKEN=token. */
function carrying(token: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").split("\0").includes(`TOOLGYM_TOKEN=${token}`)) found.push(Number(entry));
    } catch {
      // gone, or not ours
    }
  }
  return found;
}

async function leftAfter(ending: "exit" | "raise" | "SIGTERM" | "SIGINT" | "SIGHUP" | "SIGKILL"): Promise<number[]> {
  const token = `child-test-${ending}-${process.pid}-${Date.now()}`;
  const command = `${process.execPath} ${resolve(root, "bin/toolgym.js")}`;
  const script = spawn(requirePython(), ["-c", DRIVER, command, token, ending], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  script.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  script.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((done) => script.once("exit", () => done()));
  const deadline = Date.now() + 90_000;
  while (!output.includes("started") && script.exitCode === null && Date.now() < deadline) await new Promise((done) => setTimeout(done, 50));
  assert.ok(output.includes("started"), `the server did not start: ${output.slice(-500)}`);
  assert.ok(carrying(token).length > 0, "the server runs while the script does");
  // The script ends only once the server was seen: by a signal, or by going on (stdin) to its exit.
  if (ending.startsWith("SIG")) script.kill(ending as NodeJS.Signals);
  else script.stdin.end("go\n");
  await exited;
  // The watchdog notices a killed script within a second; the server then gets SIGTERM.
  for (let wait = 0; wait < 300 && carrying(token).length > 0; wait++) await new Promise((done) => setTimeout(done, 100));
  return carrying(token);
}

describe("python/train_grpo.py stops the toolgym serve it started (issue 36)", () => {
  it("leaves no server behind after an exit, an exception, SIGTERM, SIGINT, SIGHUP or SIGKILL", async () => {
    // The six endings at once: each starts a real server, which takes seconds.
    const endings = ["exit", "raise", "SIGTERM", "SIGINT", "SIGHUP", "SIGKILL"] as const;
    const left = await Promise.all(endings.map(async (ending) => [ending, await leftAfter(ending)] as const));
    assert.deepEqual(Object.fromEntries(left), Object.fromEntries(endings.map((ending) => [ending, []])));
  });
});
