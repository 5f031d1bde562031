import { request } from "undici";
import { ProviderError } from "../core/index.ts";
import type { OutputStream } from "./io.ts";

/**
 * Before an eval starts, asks each model server `GET <base-url>/models` once, so a dead, mistyped or
 * unauthorised server is one clear error in a second instead of every episode erroring after retries.
 */
export interface PreflightTarget {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** The option that named this server, for the failure's fix (default: --base-url / --model). */
  option?: string;
}

const PREFLIGHT_TIMEOUT_MS = 10_000;

/** The URL without credentials or query (never print an API key embedded in a URL). */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    return parsed.toString();
  } catch {
    return url;
  }
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return cause.code;
  const code = (error as { code?: string }).code;
  if ((error as Error).name === "TimeoutError" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_CONNECT_TIMEOUT")
    return `no answer within ${PREFLIGHT_TIMEOUT_MS / 1000} s`;
  return code ?? cause?.message ?? (error as Error).message;
}

function fail(url: string, what: string, option = "--base-url / --model"): never {
  throw new ProviderError({
    code: "PREFLIGHT_FAILED",
    retryable: false,
    message: `model server check failed: GET ${displayUrl(url)} ${what}; check ${option} (or pass --no-preflight to skip this check)`,
  });
}

/** Checks one server; a model the server does not list is a note on `stderr` (some servers accept any name). */
export async function preflight(target: PreflightTarget, stderr: OutputStream): Promise<void> {
  const url = `${target.baseUrl.replace(/\/+$/, "")}/models`;
  const apiKey = target.apiKey ?? process.env.OPENAI_API_KEY;
  // undici's request, not fetch: fetch refuses some ports outright ("bad port"), which would hide the real problem.
  let status: number;
  let body: string;
  try {
    const response = await request(url, {
      headers: { accept: "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      headersTimeout: PREFLIGHT_TIMEOUT_MS,
      bodyTimeout: PREFLIGHT_TIMEOUT_MS,
      signal: AbortSignal.timeout(PREFLIGHT_TIMEOUT_MS),
    });
    status = response.statusCode;
    body = await response.body.text().catch(() => "");
  } catch (error) {
    fail(url, `could not connect (${causeOf(error)}); is the server running?`, target.option);
  }
  const excerpt = (length: number) => body.replace(/\s+/g, " ").slice(0, length) || "(empty body)";
  if (status === 401 || status === 403) fail(url, `answered HTTP ${status} (not authorised); pass --api-key or set OPENAI_API_KEY`, target.option);
  if (status >= 500) {
    // The server is up and speaks HTTP; some (e.g. `transformers serve` with a local model) fail only on
    // /models, while chat completions work. Say so and go on: the episodes will tell.
    stderr.write(`toolgym: note: ${displayUrl(url)} answered HTTP ${status}; the server is up, so the run goes on\n`);
    return;
  }
  if (status < 200 || status >= 300) fail(url, `answered HTTP ${status}: ${excerpt(160)}; is it an OpenAI-compatible /v1 URL?`, target.option);
  let ids: string[] | undefined;
  try {
    const parsed = JSON.parse(body) as { data?: Array<{ id?: unknown }> };
    if (Array.isArray(parsed.data)) ids = parsed.data.map((entry) => String(entry.id));
  } catch {
    fail(url, `answered HTTP ${status} with non-JSON (${excerpt(80)}); is it an OpenAI-compatible /v1 URL?`, target.option);
  }
  if (target.model && ids && ids.length > 0 && !ids.includes(target.model)) {
    stderr.write(
      `toolgym: note: ${displayUrl(url)} lists ${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ", ..." : ""}, not '${target.model}'; requests may fail\n`,
    );
  }
}

/** Checks every distinct (base URL, model) once, in parallel. */
export async function preflightAll(targets: PreflightTarget[], stderr: OutputStream): Promise<void> {
  const unique = new Map(targets.map((target) => [`${target.baseUrl}\n${target.model}`, target]));
  await Promise.all([...unique.values()].map((target) => preflight(target, stderr)));
}
