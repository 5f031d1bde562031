import { ProviderError, type Agent, type AgentRequest, type AgentTurn, type JsonValue } from "../../core/index.ts";
import { parseChatCompletion, type ChatCompletionLike } from "./parse-reply.ts";
import { redactBaseUrl, type ReplicaPool } from "./replicas.ts";
import { RequestBodyBuilder } from "./request-body.ts";

export interface SamplingParams {
  temperature?: number;
  top_p?: number;
  top_k?: number;
  max_tokens?: number;
  /** Base seed; each request gets a seed derived from it, the episode and the turn. */
  seed?: number;
}

export interface OpenAIAgentOptions {
  pool: ReplicaPool;
  model: string;
  sampling?: SamplingParams;
  /** Sent as the top-level `chat_template_kwargs` body field (vLLM, SGLang, transformers serve). */
  chatTemplateKwargs?: Record<string, JsonValue>;
  /** Retries of transient failures per model call (default 6). */
  maxRetries?: number;
  /**
   * Attempts of one model call that may time out before it fails (default 2): a hung server fails the episode
   * after two time-outs, not after every retry has waited the full time-out.
   */
  maxTimeouts?: number;
  /** First backoff in ms (default 500; doubles per attempt, full jitter, capped at 30 s). */
  backoffMs?: number;
  /** Stable key of the episode: tool-call ids and per-request seeds derive from it. */
  episodeKey: string;
  /** A seed sent unchanged with every request of the episode (tau2 sends each trial's seed so), instead of `sampling.seed`'s per-request ones. */
  fixedSeed?: number;
  /** Sent as `tool_choice` whenever tools are offered (tau2's `generate` sends "auto"); absent: not sent. */
  toolChoice?: string;
  /** Recover hermes `<tool_call>` text left in `content` as tool calls (default true; tau2 keeps it as text). */
  recoverTextToolCalls?: boolean;
  /** Shared counters across agents (requests, retries by reason). */
  stats?: ProviderStats;
  random?: () => number;
}

export interface ProviderStats {
  requests: number;
  /** Failed attempts (each retried, or the last one of an errored call). */
  failedAttempts: number;
  failuresByReason: Record<string, number>;
}

export function createProviderStats(): ProviderStats {
  return { requests: 0, failedAttempts: 0, failuresByReason: {} };
}

/** A 31-bit FNV-1a hash: derives per-request seeds and fallback ids without randomness. */
export function hash31(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0) & 0x7fffffff;
}

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);
const TIMEOUT_CODES = new Set(["TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT"]);

/** The error code of a transport failure, looking through `fetch failed` wrappers to their cause. */
function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && typeof current === "object" && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The server's own words for a failed request: `error.message` from a JSON error body, else the text. */
function errorDetail(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const message = typeof parsed.error === "string" ? parsed.error : (parsed.error?.message ?? parsed.message ?? parsed.detail);
    if (typeof message === "string") return message.slice(0, 300);
  } catch {
    // not JSON: the raw text below
  }
  return text.slice(0, 300);
}

/**
 * A refusal that is the model's failure rather than the server's: the conversation outgrew the context
 * (vLLM "maximum context length", OpenAI `context_length_exceeded`, SGLang "longer than the model's context
 * length") or a content filter. Only for 4xx answers, which retrying cannot change.
 */
const CONTEXT_OVERFLOW =
  /maximum context length|context[_ ]length[_ ]exceeded|longer than the model's context length|context window|prompt is too long|too many (input )?tokens/i;
const CONTENT_FILTER = /content[_ ]filter|content[_ ]policy|content management policy|responsible ?AI policy/i;

function modelFailureOf(status: number, text: string): "prompt_too_long" | "content_filter" | undefined {
  if (status < 400 || status >= 500 || status === 408 || status === 409 || status === 429) return undefined;
  if (CONTEXT_OVERFLOW.test(text)) return "prompt_too_long";
  if (CONTENT_FILTER.test(text)) return "content_filter";
  return undefined;
}

/** A ProviderError for an HTTP status other than 2xx: retryable for 408, 409, 429 and 5xx. */
export function httpStatusError(status: number, text: string, baseUrl: string): ProviderError {
  const modelFailure = modelFailureOf(status, text.slice(0, 4096));
  if (modelFailure) {
    return new ProviderError({
      code: modelFailure === "prompt_too_long" ? "MODEL_CONTEXT_OVERFLOW" : "MODEL_CONTENT_FILTER",
      message: `HTTP ${status} from ${redactBaseUrl(baseUrl)}: ${errorDetail(text)} (the model's failure: the episode ends as ${modelFailure} and is scored)`,
      status,
      retryable: false,
      modelFailure,
    });
  }
  const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
  const hint = retryable
    ? "the server is overloaded or failing"
    : "the server rejected the request; check --model, the sampling options and that the server supports them";
  return new ProviderError({
    code: `PROVIDER_HTTP_${status}`,
    message: `HTTP ${status} from ${redactBaseUrl(baseUrl)}: ${errorDetail(text)} (${hint})`,
    status,
    retryable,
  });
}

/** Classifies a failed request: a ProviderError that says whether a retry can help. */
export function toProviderError(error: unknown, baseUrl: string, signal?: AbortSignal): ProviderError {
  if (ProviderError.isInstance(error) && "retryable" in error) return error as ProviderError;
  const where = redactBaseUrl(baseUrl);
  if (signal?.aborted) return new ProviderError({ code: "PROVIDER_ABORTED", message: `request to ${where} was aborted`, retryable: false, cause: error });
  const code = errorCode(error);
  if (code === "REPLY_TOO_LARGE") {
    return new ProviderError({
      code: "MODEL_REPLY_TOO_LARGE",
      message: `${(error as Error).message} from ${where} (the model's failure: the episode ends as reply_too_large and is scored)`,
      retryable: false,
      modelFailure: "reply_too_large",
      cause: error,
    });
  }
  if (code && TIMEOUT_CODES.has(code)) {
    return new ProviderError({ code: "PROVIDER_TIMEOUT", message: `timeout talking to ${where}; check that the server is up`, retryable: true, cause: error });
  }
  if ((code && CONNECTION_CODES.has(code)) || (error instanceof TypeError && error.message === "fetch failed")) {
    const detail = code ?? ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
    return new ProviderError({
      code: "PROVIDER_CONNECTION",
      message: `connection (${detail}) talking to ${where}; check that the server is up`,
      retryable: true,
      cause: error,
    });
  }
  if (error instanceof SyntaxError) {
    return new ProviderError({
      code: "PROVIDER_MALFORMED",
      message: `malformed JSON response from ${where} (${error.message})`,
      retryable: true,
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ProviderError({ code: "PROVIDER_FAILED", message: `request to ${where} failed: ${message}`, retryable: true, cause: error });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * A model agent over the OpenAI chat-completions API. One agent per episode (its key seeds the request
 * seeds and fallback tool-call ids). Malformed replies become format errors (see parseChatCompletion);
 * transient failures are retried with exponential backoff and full jitter on the least-loaded replica;
 * when retries run out a retryable ProviderError is thrown and the rollout records the episode as errored.
 * Requests go straight to `POST {base}/chat/completions` over the replica's transport (the wire format
 * the `openai` client speaks, without its per-request overhead); the body is built incrementally
 * (RequestBodyBuilder), so a long episode does not re-serialise its whole history every turn.
 */
export function createOpenAIAgent(options: OpenAIAgentOptions): Agent {
  const maxRetries = options.maxRetries ?? 6;
  const maxTimeouts = options.maxTimeouts ?? 2;
  const backoffMs = options.backoffMs ?? 500;
  const random = options.random ?? Math.random;
  const sampling = options.sampling ?? {};
  // Fixed fields in the order the body has always had them (the seed goes after them, per turn).
  const samplingFields: Array<readonly [string, unknown]> = [];
  for (const name of ["temperature", "top_p", "top_k", "max_tokens"] as const) if (sampling[name] !== undefined) samplingFields.push([name, sampling[name]]);
  const bodies = new RequestBodyBuilder(options.model);
  const callIdStem = `call_${hash31(options.episodeKey)}_`;
  let turn = 0;
  return {
    id: `openai:${options.model}`,
    async act(request: AgentRequest): Promise<AgentTurn> {
      turn++;
      const fields: Array<readonly [string, unknown]> = [...samplingFields];
      if (options.fixedSeed !== undefined) fields.push(["seed", options.fixedSeed]);
      else if (sampling.seed !== undefined) fields.push(["seed", hash31(`${sampling.seed}\u0000${options.episodeKey}\u0000${turn}`)]);
      if (options.chatTemplateKwargs) fields.push(["chat_template_kwargs", options.chatTemplateKwargs]);
      const offered = request.protocol === "tools" && request.tools.length > 0;
      if (offered && options.toolChoice !== undefined) fields.push(["tool_choice", options.toolChoice]);
      const body = bodies.build(request.messages, offered ? request.tools : undefined, fields);
      let lastError: ProviderError | undefined;
      let timeouts = 0;
      let attempts = 0;
      for (let attempt = 0; attempt <= maxRetries; attempt++) {
        attempts++;
        if (request.signal?.aborted) throw new ProviderError({ code: "PROVIDER_ABORTED", message: "the run was stopped", retryable: false });
        const replica = options.pool.acquire();
        if (options.stats) options.stats.requests++;
        let response: unknown;
        try {
          const reply = await replica.transport.post("/chat/completions", body, request.signal);
          if (reply.status < 200 || reply.status >= 300) throw httpStatusError(reply.status, reply.text, replica.baseUrl);
          response = JSON.parse(reply.text);
          if (typeof response !== "object" || response === null || !Array.isArray((response as ChatCompletionLike).choices)) {
            throw new ProviderError({
              code: "PROVIDER_MALFORMED",
              message: `response from ${redactBaseUrl(replica.baseUrl)} is not a chat completion (no choices array)`,
              retryable: true,
            });
          }
          const finish = (response as { choices: Array<{ finish_reason?: unknown } | null> }).choices[0]?.finish_reason;
          if (finish === "content_filter")
            throw new ProviderError({
              code: "MODEL_CONTENT_FILTER",
              message: `the reply from ${redactBaseUrl(replica.baseUrl)} was withheld by a content filter (finish_reason content_filter; the episode ends as content_filter and is scored)`,
              retryable: false,
              modelFailure: "content_filter",
            });
        } catch (error) {
          const failure = toProviderError(error, replica.baseUrl, request.signal);
          options.pool.release(replica, failure.retryable ? "failed" : "ok");
          if (!failure.retryable) throw failure;
          lastError = failure;
          if (options.stats) {
            options.stats.failedAttempts++;
            options.stats.failuresByReason[failure.code] = (options.stats.failuresByReason[failure.code] ?? 0) + 1;
          }
          if (failure.code === "PROVIDER_TIMEOUT" && ++timeouts >= maxTimeouts) break;
          if (attempt < maxRetries) await sleep(random() * Math.min(30_000, backoffMs * 2 ** attempt), request.signal);
          continue;
        }
        options.pool.release(replica, "ok");
        return parseChatCompletion(response as ChatCompletionLike, {
          protocol: request.protocol,
          callIdPrefix: `${callIdStem}${turn}`,
          recoverTextToolCalls: options.recoverTextToolCalls ?? true,
        });
      }
      const last = lastError as ProviderError;
      throw new ProviderError({
        code: "PROVIDER_RETRIES_EXHAUSTED",
        message: `model call failed after ${attempts} attempts${timeouts >= maxTimeouts ? ` (${timeouts} timed out)` : ""}; last error: ${last.message}`,
        status: last.status,
        retryable: true,
        cause: last,
      });
    },
  };
}
