import { z } from "zod";
import { episodeFromParts } from "../_kit/episode-parts.ts";
import { toolError, type Episode, type JsonValue, type Message, type RejectedCall, type ToolResult } from "../../core/index.ts";
import { createToolbox, defineTool } from "../_kit/toolbox.ts";
import { balrogPrompt, instructionPrompt, invalidActionNotice, parseReply, DEFAULT_ACTION, type BalrogAgent } from "./balrog.ts";
import { ACTION_BY_NAME, ACTION_NAMES } from "./constants.ts";
import { MixedTrainLocalLevel, type BabyAITask } from "./level.ts";
import { describeObservation } from "./text.ts";

export interface BabyAIEpisodeOptions {
  task: BabyAITask;
  numDistractors: number;
  levelSeed: number[];
  protocol: "text" | "tools";
  maxTextHistory: number;
  feedbackOnInvalidAction: boolean;
  /** BALROG's agent on the text protocol: how replies are parsed and the prompt is built. */
  balrogAgent: BalrogAgent;
}

/** One env step; `valid: false` runs the action BALROG defaults to and records what the agent sent. */
type Step = (action: number, actionName: string, candidate: string, valid: boolean, errorKind: string) => ToolResult;

const defaultAction = ACTION_BY_NAME.get(DEFAULT_ACTION) as number;

/** What a refused call records as the agent's attempt: the bad action itself, else the whole call. */
function rejectedCandidate(call: RejectedCall): string {
  if (call.errorKind === "unknown_tool") return call.name;
  const action = typeof call.args === "object" && call.args !== null ? (call.args as Record<string, unknown>).action : undefined;
  if (typeof action === "string" && ACTION_BY_NAME.has(action)) return JSON.stringify(call.args);
  return typeof action === "string" ? action : JSON.stringify(action ?? null);
}

const actToolbox = createToolbox<Step>([
  defineTool({
    name: "act",
    description: "Take one action in the game. Returns the next observation: what you carry, the walls and the objects you see, with their distances.",
    kind: "write",
    input: z.strictObject({ action: z.enum(ACTION_NAMES).describe("The action to take.") }),
    execute: (step: Step, { action }) => step(ACTION_BY_NAME.get(action) as number, action, action, true, ""),
  }),
]);

const TOOLS_INSTRUCTION = "\n\nTake every action by calling the `act` tool with one of the actions above.";
const MAX_RECORDED_CANDIDATES = 64;

/**
 * One BabyAI episode behind toolgym's Episode interface, following BALROG's `Evaluator.run_episode`:
 * each reply is one env step (invalid output runs "go forward" and the notice is prepended to the next
 * observation); the episode ends when the level terminates or truncates at `max_steps`.
 */
export function startBabyAIEpisode(options: BabyAIEpisodeOptions): Episode {
  const level = new MixedTrainLocalLevel(options.task, options.numDistractors);
  level.reset(options.levelSeed);
  const prompt = instructionPrompt(level.mission);
  const messages: Message[] = [
    { role: "user", content: options.protocol === "tools" ? prompt + TOOLS_INSTRUCTION : prompt },
    { role: "user", content: describeObservation(level) },
  ];
  let episodeReturn = 0;
  let success = false;
  let done = false;
  const failedCandidates: string[] = [];
  let invalidCount = 0;

  const act: Step = (action, actionName, candidate, valid, errorKind) => {
    if (done) return { content: "The episode has already ended.", isError: true, errorKind: "after_done", done: true };
    level.step(action);
    episodeReturn += level.lastReward;
    if (level.lastReward > 0) success = true;
    let text = describeObservation(level);
    if (!valid) {
      invalidCount++;
      if (failedCandidates.length < MAX_RECORDED_CANDIDATES) failedCandidates.push(candidate);
      if (options.feedbackOnInvalidAction) text = invalidActionNotice(actionName) + text;
    }
    done = level.terminated || level.truncated;
    return valid ? { content: text, isError: false, done } : { content: text, isError: true, errorKind, done };
  };

  return episodeFromParts({
    protocol: options.protocol,
    messages,
    tools: options.protocol === "tools" ? actToolbox.specs : [],
    ...(options.protocol === "tools" ? { validators: actToolbox.validators } : {}),
    isDone: () => done,
    // BALROG ends an episode at max_steps with truncated set; that is not a finish.
    isTruncated: () => done && level.truncated && !level.terminated,
    reply(text: string): ToolResult {
      const parsed = parseReply(text, options.balrogAgent);
      return act(parsed.action, parsed.actionName, parsed.candidate, parsed.valid, "invalid_action");
    },
    call(name: string, args: unknown): ToolResult {
      return actToolbox.run(act, name, args);
    },
    rejected(call: RejectedCall): ToolResult {
      // The text protocol has no tools: every call is refused without a step, with what to send instead.
      if (options.protocol === "text") {
        return toolError(
          "unknown_tool",
          'this babyai episode uses the text protocol: reply with an action as plain text, or set config protocol "tools" for the act tool',
        );
      }
      // As with invalid text output in BALROG, a refused call still takes a step: the default action.
      return act(defaultAction, DEFAULT_ACTION, rejectedCandidate(call), false, call.errorKind);
    },
    ...(options.protocol === "text" ? { view: (log: Message[]) => balrogPrompt(log, options.maxTextHistory, options.balrogAgent) } : {}),
    reward() {
      const progression = success ? 1 : 0;
      return {
        total: episodeReturn,
        components: { return: episodeReturn, success: progression, progression },
        formula: "total = return = 1 − 0.9·steps/max_steps on success, else 0 (BALROG episode_return); progression = success",
        errors: [],
        diagnostics: {},
      };
    },
    diagnostics(): Record<string, JsonValue> {
      return {
        protocol: options.protocol,
        balrog_agent: options.protocol === "text" ? options.balrogAgent : null,
        task: options.task,
        num_dists: options.numDistractors,
        level_seed: options.levelSeed.reduce((sum, word, position) => sum + BigInt(word) * (1n << BigInt(32 * position)), 0n).toString(),
        mission: level.mission,
        max_steps: level.maxSteps,
        steps: level.stepCount,
        terminated: level.terminated,
        truncated: level.truncated,
        episode_return: episodeReturn,
        progression: success ? 1 : 0,
        invalid_actions: invalidCount,
        failed_candidates: failedCandidates,
      };
    },
  });
}
