import { CommanderError } from "commander";
import { ToolgymError } from "../core/index.ts";

/** Exit codes, documented in the README. */
export const EXIT_OK = 0;
export const EXIT_RUNTIME = 1;
export const EXIT_USAGE = 2;
/** Stopped by Ctrl-C (128 + SIGINT, the shell convention); the run is resumable. */
export const EXIT_INTERRUPTED = 130;

export interface ErrorReport {
  /** The one line printed on stderr, without the trailing newline. */
  line: string;
  exitCode: number;
  /** Indented lines after the coded line, for the few errors that must list things (conflicting runs). */
  details?: string[];
}

/** Codes for commander's own errors, so a bad command line reads like every other toolgym error. */
const COMMANDER_CODES: Record<string, string> = {
  "commander.unknownOption": "OPTION_UNKNOWN",
  "commander.unknownCommand": "COMMAND_UNKNOWN",
  "commander.missingArgument": "ARGUMENT_MISSING",
  "commander.optionMissingArgument": "OPTION_VALUE_MISSING",
  "commander.missingMandatoryOptionValue": "OPTION_REQUIRED",
  "commander.conflictingOption": "OPTION_CONFLICT",
  "commander.invalidArgument": "ARGUMENT_INVALID",
  "commander.excessArguments": "ARGUMENTS_EXCESS",
};

/** Boundaries whose errors are the user's command line or config (exit 2); everything else is a runtime failure (exit 1). */
const USAGE_BOUNDARIES = new Set(["cli", "config"]);

/** Where unexpected errors should be reported (no repository URL is published yet, so the package name). */
const REPORT_HINT = "this is a toolgym bug; please report it with the command line that caused it";

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

/** commander's "error: unknown option '--nn'\n(Did you mean --n?)" as "unknown option '--nn'; did you mean --n?". */
function commanderMessage(error: CommanderError, command: string | undefined): string {
  const [first = "", ...rest] = error.message.replace(/^error:\s*/, "").split("\n");
  const suggestion = rest.join(" ").match(/Did you mean (.+)\?/);
  if (suggestion) return `${first}; did you mean ${suggestion[1]}?`;
  return `${first}; see toolgym ${command ? `${command} ` : ""}--help`;
}

/** Node system errors a user can fix (a busy port, a missing or unreadable file), as toolgym messages. */
function systemMessage(error: NodeJS.ErrnoException & { port?: number; address?: string }): { message: string; code: string } | undefined {
  switch (error.code) {
    case "EADDRINUSE":
      return { code: "PORT_IN_USE", message: `port ${error.port ?? "?"} is in use; pass --port with a free port (or --port 0 to pick one)` };
    case "EACCES":
      if (error.syscall === "listen") return { code: "PORT_DENIED", message: `not allowed to listen on port ${error.port ?? "?"}; pass --port above 1023` };
      return { code: "FILE_DENIED", message: `permission denied: ${error.path ?? error.message}` };
    case "ENOENT":
      return { code: "FILE_NOT_FOUND", message: `no such file or directory: ${error.path ?? error.message}` };
    case "EISDIR":
      return { code: "FILE_IS_DIRECTORY", message: `expected a file, got a directory: ${error.path ?? error.message}` };
    case "ENOSPC":
      return { code: "DISK_FULL", message: `no space left on the device while writing ${error.path ?? "output"}` };
    case "EADDRNOTAVAIL":
      return { code: "HOST_UNAVAILABLE", message: `cannot listen on ${error.address ?? "that address"}; pass --host 127.0.0.1 or 0.0.0.0` };
    default:
      return undefined;
  }
}

/**
 * The single error path of the CLI: commander errors, toolgym's domain errors, fixable system errors and
 * anything unexpected become one line `toolgym: <message> [CODE]` and an exit code. Never a stack trace.
 */
export function reportError(error: unknown, command?: string): ErrorReport {
  if (error instanceof CommanderError) {
    const code = COMMANDER_CODES[error.code] ?? "USAGE_INVALID";
    return { line: `toolgym: ${oneLine(commanderMessage(error, command))} [${code}]`, exitCode: EXIT_USAGE };
  }
  if (ToolgymError.isInstance(error) && error.code === "INTERRUPTED")
    return { line: `toolgym: ${oneLine(error.message)} [INTERRUPTED]`, exitCode: EXIT_INTERRUPTED };
  if (ToolgymError.isInstance(error)) {
    const details = (error as { details?: unknown }).details;
    return {
      line: `toolgym: ${oneLine(error.message)} [${error.code}]`,
      exitCode: USAGE_BOUNDARIES.has(error.boundary) ? EXIT_USAGE : EXIT_RUNTIME,
      ...(Array.isArray(details) ? { details: details.map((detail) => `  ${oneLine(String(detail))}`) } : {}),
    };
  }
  const system = error instanceof Error ? systemMessage(error as NodeJS.ErrnoException) : undefined;
  if (system) return { line: `toolgym: ${oneLine(system.message)} [${system.code}]`, exitCode: EXIT_RUNTIME };
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { line: `toolgym: unexpected error: ${oneLine(message)} (${REPORT_HINT}) [UNEXPECTED]`, exitCode: EXIT_RUNTIME };
}
