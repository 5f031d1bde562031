import OpenAI from "openai";
import { DEFAULT_MAX_REPLY_BYTES, TransportTimeoutError, readCapped, type ChatTransport, type TransportOptions } from "./transport.ts";

/**
 * A transport through the official `openai` npm client (`chat.completions.create`), for servers or proxies
 * that need its behaviour (Azure-style paths, its header conventions). Retries stay with the agent
 * (`maxRetries: 0` here), so the retry policy and the error accounting are the same as the pool transport's.
 * Costs about 3× the client CPU per request of the default pool transport (see bench/harness.ts).
 */
export function createOpenAIClientTransport(baseUrl: string, options: TransportOptions): ChatTransport {
  const client = new OpenAI({ baseURL: baseUrl, apiKey: options.apiKey, maxRetries: 0, timeout: options.timeoutMs });
  return {
    async post(path, body, signal) {
      if (path !== "/chat/completions") throw new TypeError(`the openai client transport only posts /chat/completions, not ${path}`);
      const params = JSON.parse(body) as OpenAI.ChatCompletionCreateParamsNonStreaming;
      try {
        const response = await client.chat.completions.create(params, { signal }).asResponse();
        return { status: response.status, text: await readCapped(response, options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES) };
      } catch (error) {
        if (error instanceof OpenAI.APIConnectionTimeoutError) throw new TransportTimeoutError(options.timeoutMs);
        if (error instanceof OpenAI.APIError && typeof error.status === "number") {
          return { status: error.status, text: JSON.stringify({ error: error.error ?? { message: error.message } }) };
        }
        if (error instanceof OpenAI.APIConnectionError) {
          const cause = (error as { cause?: unknown }).cause;
          throw cause instanceof Error ? cause : error;
        }
        throw error;
      }
    },
    close: async () => {},
  };
}
