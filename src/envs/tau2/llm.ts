import { UsageError, type Agent, type AgentTurn, type JsonValue, type Message, type ToolSpec } from "../../core/index.ts";
import { createOpenAIAgent } from "../../agents/openai/agent.ts";
import { ReplicaPool } from "../../agents/openai/replicas.ts";

/**
 * The OpenAI-compatible client the user simulator and the NL judge use: the agents' own client, so
 * retries, timeouts and replica handling are the same. A model is written `URL#NAME` (`URL,URL#NAME`
 * for several replicas of one server); `URL` alone means tau2's default model name.
 */
export interface ModelAddress {
  baseUrls: string[];
  name: string;
}

/** tau2's default user-simulator and NL-judge model (`config.DEFAULT_LLM_USER`, `DEFAULT_LLM_NL_ASSERTIONS`). */
export const TAU2_DEFAULT_MODEL = "gpt-4.1-2025-04-14";

export function parseModelAddress(text: string, option: string): ModelAddress {
  const hash = text.lastIndexOf("#");
  const urls = hash >= 0 ? text.slice(0, hash) : text;
  const name = hash >= 0 ? text.slice(hash + 1) : TAU2_DEFAULT_MODEL;
  const baseUrls = urls.split(",").filter((url) => url !== "");
  if (!name || baseUrls.length === 0 || !baseUrls.every((url) => /^https?:\/\//.test(url))) {
    throw new UsageError({
      code: "TAU2_MODEL_ADDRESS",
      message: `${option} '${text}' must be URL#NAME (or URL for tau2's default ${TAU2_DEFAULT_MODEL}), e.g. http://127.0.0.1:8000/v1#Qwen/Qwen3-0.6B`,
    });
  }
  return { baseUrls, name };
}

const pools = new Map<string, ReplicaPool>();

/** The shared replica pool of an address (one per server list). */
export function poolFor(address: ModelAddress): ReplicaPool {
  const key = address.baseUrls.join(",");
  let pool = pools.get(key);
  if (!pool) {
    pool = new ReplicaPool({ baseUrls: address.baseUrls, timeoutMs: 300_000 });
    pools.set(key, pool);
  }
  return pool;
}

/**
 * One client per episode (its fallback call ids derive from the key). It sends what tau2's `generate`
 * sends: temperature 0 (tau2's default for the user and the judge), the trial's seed as given, and
 * nothing else unless asked (`chatTemplateKwargs`, `maxTokens` are toolgym options).
 */
export function chatModel(
  address: ModelAddress,
  episodeKey: string,
  options: { temperature?: number; maxTokens?: number; seed?: number; chatTemplateKwargs?: Record<string, unknown> } = {},
): Agent {
  return createOpenAIAgent({
    pool: poolFor(address),
    model: address.name,
    episodeKey,
    sampling: { temperature: options.temperature ?? 0, ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}) },
    // tau2's `generate`: tool_choice "auto" when tools are sent, <tool_call> text in content kept as text.
    toolChoice: "auto",
    recoverTextToolCalls: false,
    ...(options.seed !== undefined ? { fixedSeed: options.seed } : {}),
    ...(options.chatTemplateKwargs ? { chatTemplateKwargs: options.chatTemplateKwargs as Record<string, JsonValue> } : {}),
  });
}

/** One request to a user or judge model; `signal` aborts it (its episode closed). */
export async function complete(model: Agent, messages: Message[], tools: ToolSpec[] = [], signal?: AbortSignal): Promise<AgentTurn> {
  return model.act({ messages, tools, protocol: tools.length > 0 ? "tools" : "text", ...(signal ? { signal } : {}) });
}
