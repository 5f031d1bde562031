/**
 * The toolgym error family. Every error carries a stable `code` and a message that says how to fix
 * the problem. `isInstance` works across duplicate copies of the package (marker symbol).
 */
const marker = Symbol.for("toolgym.error");

export type ErrorBoundary = "config" | "tool" | "provider" | "reward" | "server" | "data" | "harness" | "cli";

export interface ErrorRecord {
  type: string;
  code: string;
  message: string;
  boundary: ErrorBoundary;
}

export class ToolgymError extends Error {
  readonly [marker] = true;
  readonly code: string;
  readonly boundary: ErrorBoundary;

  constructor(options: { code: string; message: string; boundary?: ErrorBoundary; cause?: unknown }) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.boundary = options.boundary ?? "harness";
  }

  static isInstance(value: unknown): value is ToolgymError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }

  toRecord(): ErrorRecord {
    return { type: this.name, code: this.code, message: this.message, boundary: this.boundary };
  }
}

/** Invalid environment or run configuration; thrown eagerly at the edges. */
export class EnvConfigError extends ToolgymError {
  constructor(options: { message: string; code?: string; cause?: unknown }) {
    super({ code: options.code ?? "ENV_CONFIG_INVALID", message: options.message, boundary: "config", cause: options.cause });
  }
}

/** A bad tool call; becomes a model-visible error result, never a throw out of a rollout. */
export class ToolInputError extends ToolgymError {
  constructor(options: { message: string; code?: string }) {
    super({ code: options.code ?? "TOOL_INPUT_INVALID", message: options.message, boundary: "tool" });
  }
}

/** A failure talking to a model server. `retryable` marks transient failures (429, 5xx, resets, timeouts). */
export class ProviderError extends ToolgymError {
  readonly status: number | undefined;
  readonly retryable: boolean;
  /**
   * Set when the server answered and the answer is the model's failure, not the infrastructure's (the
   * conversation outgrew its context, a content filter, a reply over the size cap): the episode ends so and
   * is scored, as verifiers ends such a rollout (`prompt_too_long`) instead of dropping it from the mean.
   */
  readonly modelFailure: ModelFailure | undefined;
  constructor(options: { message: string; code?: string; status?: number; retryable: boolean; cause?: unknown; modelFailure?: ModelFailure }) {
    super({ code: options.code ?? "PROVIDER_FAILED", message: options.message, boundary: "provider", cause: options.cause });
    this.status = options.status;
    this.retryable = options.retryable;
    this.modelFailure = options.modelFailure;
  }
}

/** How a model-server answer that is the model's failure ends its episode (a termination reason). */
export type ModelFailure = "prompt_too_long" | "content_filter" | "reply_too_large";

/** A reward component that could not be computed or was out of range. */
export class RewardError extends ToolgymError {
  constructor(options: { message: string; code?: string; cause?: unknown }) {
    super({ code: options.code ?? "REWARD_FAILED", message: options.message, boundary: "reward", cause: options.cause });
  }
}

/** Bad input data (a malformed row, an unreadable file). Carries the file and line where known. */
export class DataError extends ToolgymError {
  readonly file: string | undefined;
  readonly line: number | undefined;
  constructor(options: { message: string; code?: string; file?: string; line?: number; cause?: unknown }) {
    const where = options.file ? `${options.file}${options.line ? `:${options.line}` : ""}: ` : "";
    super({ code: options.code ?? "DATA_INVALID", message: `${where}${options.message}`, boundary: "data", cause: options.cause });
    this.file = options.file;
    this.line = options.line;
  }
}

/** An HTTP-facing error with a 4xx status. */
export class ServerError extends ToolgymError {
  readonly status: number;
  constructor(options: { message: string; code: string; status: number }) {
    super({ code: options.code, message: options.message, boundary: "server" });
    this.status = options.status;
  }
}

/** Work refused because too much of it already waits (a full thread pool's queue): try again later. */
export class BusyError extends ToolgymError {
  constructor(options: { message: string; code?: string }) {
    super({ code: options.code ?? "BUSY", message: options.message, boundary: "harness" });
  }
}

/** A bad command line; the CLI prints the message on one line and exits with 2. */
export class UsageError extends ToolgymError {
  constructor(options: { message: string; code?: string }) {
    super({ code: options.code ?? "USAGE_INVALID", message: options.message, boundary: "cli" });
  }
}

export function errorToRecord(error: unknown, boundary: ErrorBoundary = "harness"): ErrorRecord {
  if (ToolgymError.isInstance(error)) return error.toRecord();
  const message = error instanceof Error ? error.message : String(error);
  const type = error instanceof Error ? error.name : typeof error;
  return { type, code: "UNEXPECTED", message, boundary };
}
