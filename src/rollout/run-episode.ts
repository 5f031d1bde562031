import { ProviderError, errorToRecord, type Agent, type AnyEnvironment, type EpisodeContext, type Trajectory } from "../core/index.ts";
import { EpisodeDriver } from "./episode-driver.ts";

export interface RunEpisodeOptions {
  env: AnyEnvironment;
  split: string;
  seed: number;
  index: number;
  config: unknown;
  agent: Agent;
  /** Defaults to the environment's own limit for the task. */
  maxTurns?: number;
  /**
   * Tool protocol, assistant reply without a tool call: `nudge` (default) sends a user message asking
   * for a tool call and counts a format error; `end` ends the episode (TRL's tool loop behaviour).
   */
  onNoToolCall?: "nudge" | "end";
  /** Prebuilt task (skips generation); must equal `env.generate(...)` for the address. */
  task?: unknown;
  signal?: AbortSignal;
  /** Episode id; defaults to `env/split/seed/index`. */
  id?: string;
  /** The trial and its seed, passed to `env.start` (`toolgym eval --num-trials`). */
  context?: EpisodeContext;
}

export const NO_TOOL_CALL_FEEDBACK = "Your reply contained no tool call. Continue by calling one of the tools; call `finish` when you are done.";

/**
 * The episode loop: agent turn → tool execution → results appended → repeat, until the environment is
 * done or the turn limit is reached. Agent-agnostic; provider failures that survive the agent's own
 * retries end the episode as `errored` (excluded from means, never scored as 0), while a model failure its
 * server reports (context overflow, content filter, a reply over the cap) ends it as that failure, scored. The state and the
 * reward live in `EpisodeDriver`, which the environment server's sessions use too.
 */
export async function runEpisode(options: RunEpisodeOptions): Promise<Trajectory> {
  const { env, agent, split, seed, index, config } = options;
  const driver = new EpisodeDriver({ env, split, seed, index, config, task: options.task, maxTurns: options.maxTurns, context: options.context });
  const episode = driver.episode;
  if (episode.opening) {
    try {
      driver.messages.push(...(await episode.opening()));
    } catch (error) {
      driver.end("errored", errorToRecord(error, ProviderError.isInstance(error) ? "provider" : "harness"));
    }
  }

  while (driver.beginTurn()) {
    let turn;
    try {
      turn = await agent.act({
        messages: episode.view ? episode.view(driver.messages) : driver.messages,
        tools: episode.tools,
        protocol: episode.protocol,
        signal: options.signal,
      });
    } catch (error) {
      // The model's own failure reported by its server ends the episode so, scored; the infrastructure's is errored.
      const modelFailure = ProviderError.isInstance(error) && env.modelFailures !== "errored" ? (error as ProviderError).modelFailure : undefined;
      driver.end(modelFailure ?? "errored", errorToRecord(error, ProviderError.isInstance(error) ? "provider" : "harness"));
      break;
    }
    if (turn.usage) {
      driver.usage.promptTokens += turn.usage.promptTokens;
      driver.usage.completionTokens += turn.usage.completionTokens;
    }
    const message = turn.message;
    const turnErrors = turn.formatErrors ?? [];
    driver.recordAssistant(message, turnErrors);
    if (episode.respond) {
      // The environment routes the message whole (text and tool calls together) and answers for its partners.
      try {
        await driver.respond(message);
      } catch (error) {
        driver.end("errored", errorToRecord(error, ProviderError.isInstance(error) ? "provider" : "harness"));
        break;
      }
      continue;
    }
    const calls = episode.protocol === "text" ? [] : (message.tool_calls ?? []);

    if (calls.length === 0) {
      // A text-protocol action, or a message to the environment's conversational partner (a simulated user).
      const replied = await driver.reply(message.content ?? "");
      if (replied) continue;
      if (turnErrors.length === 0) driver.formatErrors.push({ kind: "no_tool_call", message: NO_TOOL_CALL_FEEDBACK });
      if (options.onNoToolCall === "end") {
        driver.end("no_tool_call");
        break;
      }
      const feedback = turnErrors.length > 0 ? turnErrors.map((error) => error.message).join("\n") : NO_TOOL_CALL_FEEDBACK;
      driver.messages.push({ role: "user", content: feedback });
      continue;
    }
    for (const call of calls) driver.call({ id: call.id, name: call.function?.name ?? "", arguments: call.function?.arguments });
  }
  return driver.trajectory({ agentId: agent.id, id: options.id });
}
