import { main } from "../../src/cli/main.ts";
import { memoryStream, type CliIo } from "../../src/cli/io.ts";

/** Runs the CLI in-process with its own streams (nothing reaches the real terminal) and returns what it printed. */
export async function runCli(argv: string[], options: { interrupts?: () => AbortSignal } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = memoryStream();
  const stderr = memoryStream();
  const io: CliIo = { stdout, stderr, ...(options.interrupts ? { interrupts: options.interrupts } : {}) };
  const code = await main(argv, io);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
