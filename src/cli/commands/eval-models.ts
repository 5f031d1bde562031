import { UsageError } from "../../core/index.ts";
import { modelLabel, type ModelSpec } from "../../eval/run-evaluation.ts";
import type { CliIo } from "../io.ts";
import { requireHttpUrl } from "../options.ts";
import { preflightAll, type PreflightTarget } from "../preflight.ts";
import type { EvalCommandOptions } from "./eval.ts";

const MODEL_TARGET = /^([A-Za-z0-9][\w.-]*)=([^#]+)#(.+)$/;

/** The models to evaluate: `--model NAME` with `--base-url`, or `--model LABEL=URL[,URL…]#NAME`; none: scripted agents. */
export function modelSpecs(options: EvalCommandOptions): ModelSpec[] {
  const models = options.model ?? [];
  const baseUrls = (options.baseUrl ?? []).map((url) => requireHttpUrl("--base-url", url));
  if (models.length === 0) {
    if (baseUrls.length > 0) throw new UsageError({ code: "MODEL_MISSING", message: "--base-url needs --model NAME (the model id the server serves)" });
    return [{ kind: "scripted", ...(options.agent ? { policy: options.agent } : {}) }];
  }
  if (options.agent) throw new UsageError({ code: "OPTION_CONFLICT", message: "--agent picks a scripted agent; it cannot be combined with --model" });
  const sampling = {
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.topP !== undefined ? { top_p: options.topP } : {}),
    ...(options.topK !== undefined ? { top_k: options.topK } : {}),
    ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
    ...(options.samplingSeed !== undefined ? { seed: options.samplingSeed } : {}),
  };
  return models.map((text): ModelSpec => {
    const target = MODEL_TARGET.exec(text.trim());
    const urls = target
      ? (target[2] as string)
          .split(",")
          .map((url) => url.trim())
          .filter(Boolean)
          .map((url) => requireHttpUrl(`--model ${target[1]}=…`, url))
      : baseUrls;
    if (urls.length === 0)
      throw new UsageError({ code: "BASE_URL_MISSING", message: `--model ${text}: pass --base-url URL (repeatable) or --model LABEL=URL#NAME` });
    const name = target ? (target[3] as string) : text;
    const label = target ? (target[1] as string) : (options.label ?? modelLabel(name));
    return {
      kind: "openai",
      label,
      name,
      baseUrls: urls,
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      sampling,
      ...(options.chatTemplateKwargs ? { chatTemplateKwargs: options.chatTemplateKwargs } : {}),
      ...(options.timeout !== undefined ? { timeoutMs: options.timeout * 1000 } : {}),
      ...(options.maxReplyMb !== undefined ? { maxReplyBytes: Math.round(options.maxReplyMb * 1024 * 1024) } : {}),
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      ...(options.httpClient ? { client: options.httpClient } : {}),
      ...(options.recoverTextToolCalls !== undefined ? { recoverTextToolCalls: options.recoverTextToolCalls } : {}),
    };
  });
}

/**
 * The simulated user's and the judge's servers (`URL[,URL...][#NAME]`), checked like the agent's: a dead
 * one is one line before the first episode, not every episode erroring after its retries.
 */
function roleTargets(options: { userModel?: string; judgeModel?: string }): PreflightTarget[] {
  const roles: Array<[string | undefined, string]> = [
    [options.userModel, "--user-model"],
    [options.judgeModel, "--judge-model"],
  ];
  return roles.flatMap(([address, option]) => {
    if (!address) return [];
    const hash = address.lastIndexOf("#");
    const urls = (hash >= 0 ? address.slice(0, hash) : address).split(",").filter((url) => /^https?:\/\//.test(url));
    return urls.map((baseUrl) => ({ baseUrl, model: hash >= 0 ? address.slice(hash + 1) : "", option }));
  });
}

/** Checks every model server once before the first episode (skipped with --no-preflight). */
export async function checkServers(models: ModelSpec[], options: { preflight: boolean; userModel?: string; judgeModel?: string }, io: CliIo): Promise<void> {
  if (!options.preflight) return;
  const targets: PreflightTarget[] = models.flatMap((model) =>
    model.kind === "openai" ? model.baseUrls.map((baseUrl) => ({ baseUrl, model: model.name, ...(model.apiKey ? { apiKey: model.apiKey } : {}) })) : [],
  );
  await preflightAll([...targets, ...roleTargets(options)], io.stderr);
}
