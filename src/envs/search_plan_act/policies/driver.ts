import type { Agent, Message } from "../../../core/index.ts";
import { createScriptedAgent, type PlannedCall } from "../../_kit/scripted.ts";

/**
 * A script: a generator that yields a batch of tool calls per turn and receives the parsed results
 * of that batch (one per call, in order). Returning ends the script; the agent then stays silent.
 */
export type Script = Generator<PlannedCall[], void, unknown[]>;

function parse(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

/** The parsed results of the tool messages at the end of the conversation (the last batch). */
function lastBatch(messages: Message[], size: number): unknown[] {
  const results: unknown[] = [];
  for (let i = messages.length - 1; i >= 0 && results.length < size; i--) {
    const message = messages[i] as Message;
    if (message.role !== "tool") break;
    results.unshift(parse(message.content));
  }
  return results;
}

/** Drives a script through the same tool-call interface a model uses. */
export function createScriptAgent(id: string, script: Script): Agent {
  let pending = 0;
  let finished = false;
  return createScriptedAgent(id, ({ messages, turn }) => {
    if (finished) return { text: "" };
    const step = turn === 1 ? script.next() : script.next(lastBatch(messages, pending));
    if (step.done || step.value.length === 0) {
      finished = true;
      return { text: "" };
    }
    pending = step.value.length;
    return { calls: step.value };
  });
}

/** Yields one call and returns its parsed result. */
export function* single(call: PlannedCall): Generator<PlannedCall[], unknown, unknown[]> {
  const results = yield [call];
  return results[0];
}
