import { UsageError, type Agent, type Message, type ToolSpec } from "../../core/index.ts";
import { createOpenAIAgent } from "../../agents/openai/agent.ts";
import { ReplicaPool } from "../../agents/openai/replicas.ts";

/**
 * The OpenAI-compatible client the user simulator and the NL judge use: the agents' own client, so
 * retries, timeouts and replica handling are the same. A model is written `URL#NAME` (`URL,URL#NAME`
 * for several replicas of one server).
 */
export interface ModelAddress {
  baseUrls: string[];
  name: string;
}

export function parseModelAddress(text: string, option: string): ModelAddress {
  const hash = text.lastIndexOf("#");
  const urls = hash > 0 ? text.slice(0, hash) : "";
  const name = hash > 0 ? text.slice(hash + 1) : "";
  const baseUrls = urls.split(",").filter((url) => url !== "");
  if (!name || baseUrls.length === 0 || !baseUrls.every((url) => /^https?:\/\//.test(url))) {
    throw new UsageError({ code: "TAU2_MODEL_ADDRESS", message: `${option} '${text}' must be URL#NAME, e.g. http://127.0.0.1:8000/v1#Qwen/Qwen3-0.6B` });
  }
  return { baseUrls, name };
}

const pools = new Map<string, ReplicaPool>();

/** One client per episode (its call ids and seeds derive from the key); pools are shared per address. */
export function chatModel(address: ModelAddress, episodeKey: string, options: { temperature?: number; maxTokens?: number } = {}): Agent {
  const key = address.baseUrls.join(",");
  let pool = pools.get(key);
  if (!pool) {
    pool = new ReplicaPool({ baseUrls: address.baseUrls, timeoutMs: 300_000 });
    pools.set(key, pool);
  }
  return createOpenAIAgent({
    pool,
    model: address.name,
    episodeKey,
    sampling: { temperature: options.temperature ?? 0, ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}) },
    // tau2's simulator and judge answer directly; thinking would only spend tokens.
    chatTemplateKwargs: { enable_thinking: false },
  });
}

export async function complete(model: Agent, messages: Message[], tools: ToolSpec[] = []) {
  const turn = await model.act({ messages, tools, protocol: tools.length > 0 ? "tools" : "text" });
  return turn.message;
}
