/**
 * What a command may touch of the outside world: its two output streams and, for long commands, an
 * interrupt signal. `main()` receives them, so the CLI runs in-process (tests) without writing to the
 * real terminal, and nothing below `src/cli` writes to `process.stdout`/`process.stderr`.
 */
export interface OutputStream {
  write(text: string): unknown;
  /** A terminal: progress redraws in place. */
  isTTY?: boolean;
}

export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  /**
   * For commands that stop cleanly (`eval`, `serve`): calling it takes over Ctrl-C (SIGINT) and SIGTERM,
   * which then abort the returned signal instead of killing the process (a second Ctrl-C still kills).
   * Commands that never call it keep the default: Ctrl-C ends the process at once.
   */
  interrupts?(): AbortSignal;
}

/** Prints a value as indented JSON on the command's stdout. */
export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A stream that keeps what is written (tests, and commands that need to inspect output). */
export function memoryStream(): OutputStream & { text(): string } {
  const chunks: string[] = [];
  return {
    write(text: string) {
      chunks.push(text);
      return true;
    },
    text: () => chunks.join(""),
  };
}

/** What every command registration receives: the streams, and a way to set the exit code without throwing. */
export interface CommandContext {
  io: CliIo;
  setExitCode(code: number): void;
}
