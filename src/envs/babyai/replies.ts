import { UsageError, parseConfig, type JsonValue, type Message } from "../../core/index.ts";
import { invalidActionNotice, parseReply } from "./balrog.ts";
import { babyaiEnvironment } from "./index.ts";

/** One model reply as BALROG's harness handles it. */
export interface ReplyStep {
  step: number;
  /** The exact messages BALROG's agent sends before this reply. */
  prompt: Message[];
  reply: string;
  /** The agent's parsed string: what goes into the prompt history (even when invalid). */
  parsed: string;
  valid: boolean;
  /** The action the environment ran ("go forward" when the parsed string is not one of the six). */
  action: string;
  /** BALROG's `failed_candidates` entry, or null. */
  failed_candidate: string | null;
  /** The notice put in front of the next observation, or null. */
  feedback: string | null;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  /** The next observation's text as the agent will see it (notice included). */
  observation: string;
}

export interface ReplyReplay {
  env: "babyai";
  split: string;
  seed: number;
  index: number;
  task: string;
  num_dists: number;
  balrog_agent: "naive" | "cot";
  mission: string;
  max_steps: number;
  steps: ReplyStep[];
  done: boolean;
  terminated: boolean;
  truncated: boolean;
  episode_return: number;
  progression: number;
  invalid_actions: number;
  failed_candidates: string[];
  /** Replies left over after the episode ended (not applied). */
  unused_replies: number;
  /** The prompt the agent would be sent next, or null once the episode is over. */
  next_prompt: Message[] | null;
}

/**
 * `toolgym replay babyai --replies FILE`: feeds raw model replies, one per step, to the same episode
 * `toolgym eval` runs (text protocol), recording for each the prompt BALROG sends, the parse, validity,
 * the executed action and the next observation.
 */
export function replayReplies(options: { config: unknown; seed: number; index: number; split?: string; replies: unknown[] }): ReplyReplay {
  const config = parseConfig("babyai", babyaiEnvironment.configSchema, options.config);
  if (config.protocol !== "text")
    throw new UsageError({
      code: "REPLAY_PROTOCOL",
      message: 'babyai --replies replays the text protocol; drop "protocol": "tools" from --config, or use --calls for tool calls',
    });
  options.replies.forEach((reply, position) => {
    if (typeof reply !== "string")
      throw new UsageError({
        code: "REPLAY_INPUT_INVALID",
        message: `babyai --replies item ${position + 1} must be a string (a raw model reply), got ${JSON.stringify(reply)}`,
      });
  });
  const replies = options.replies as string[];
  const split = options.split ?? babyaiEnvironment.defaultSplit;
  const task = babyaiEnvironment.generate({ split, seed: options.seed, index: options.index, config });
  const episode = babyaiEnvironment.start(task);
  const view = (log: Message[]) => (episode.view ? episode.view(log) : log);
  // The log the rollout keeps: the reply as the assistant turn, the result as the next user message.
  const log: Message[] = [...episode.messages];
  const steps: ReplyStep[] = [];
  let episodeReturn = 0;
  for (const reply of replies) {
    if (episode.done) break;
    const prompt = view(log);
    const parsed = parseReply(reply, task.balrog_agent);
    const result = episode.reply!(reply) as { content: string };
    log.push({ role: "assistant", content: reply }, { role: "user", content: result.content });
    const diagnostics = episode.diagnostics!() as Record<string, JsonValue>;
    const total = diagnostics.episode_return as number;
    steps.push({
      step: steps.length + 1,
      prompt,
      reply,
      parsed: parsed.candidate,
      valid: parsed.valid,
      action: parsed.actionName,
      failed_candidate: parsed.valid ? null : parsed.candidate,
      feedback: parsed.valid || !task.feedback_on_invalid_action ? null : invalidActionNotice(parsed.actionName),
      // Only the success step has a reward, so the change in the return is exactly that step's reward.
      reward: total - episodeReturn,
      terminated: diagnostics.terminated as boolean,
      truncated: diagnostics.truncated as boolean,
      observation: result.content,
    });
    episodeReturn = total;
  }
  const diagnostics = episode.diagnostics!() as Record<string, JsonValue>;
  return {
    env: "babyai",
    split,
    seed: options.seed,
    index: options.index,
    task: task.task,
    num_dists: task.num_dists,
    balrog_agent: task.balrog_agent,
    mission: task.mission,
    max_steps: task.max_steps,
    steps,
    done: episode.done,
    terminated: diagnostics.terminated as boolean,
    truncated: diagnostics.truncated as boolean,
    episode_return: diagnostics.episode_return as number,
    progression: diagnostics.progression as number,
    invalid_actions: diagnostics.invalid_actions as number,
    failed_candidates: diagnostics.failed_candidates as string[],
    unused_replies: replies.length - steps.length,
    next_prompt: episode.done ? null : view(log),
  };
}
