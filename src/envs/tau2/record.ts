import type { JsonValue } from "../../core/index.ts";
import { parsePythonJson, plainPythonJson, pythonJsonDumps } from "../../python-semantics/index.ts";
import type { Tau2Message } from "./types.ts";

/** The fields tau2's participant messages dump that toolgym has no value for (voice, chunking), at tau2's defaults. */
export const PARTICIPANT_FIELDS = {
  audio_format: null,
  audio_path: null,
  audio_script_gold: null,
  speech_effects: null,
  source_effects: null,
  channel_effects: null,
  turn_taking_action: null,
  utterance_ids: null,
  chunk_id: null,
  is_final_chunk: true,
  source: null,
  contains_speech: true,
};

/**
 * A simulation's messages in the JSON shape of tau2's `results.json` (`SimulationRun.messages`): every
 * field tau2's message models dump, `turn_idx` the message's position, and null where toolgym has no
 * value (cost, raw provider data: not computed, never 0). Each tool call also keeps `arguments_json`, its
 * arguments exactly as Python holds them (`2.0`, `-Infinity`, integers beyond 2^53), which JSON.parse cannot.
 */
export function tau2MessagesJson(trajectory: readonly Tau2Message[]): JsonValue[] {
  return trajectory.map((message, position): JsonValue => {
    const timestamp = message.timestamp ?? null;
    if (message.role === "tool") {
      return {
        id: message.id ?? "",
        role: "tool",
        content: message.content ?? null,
        requestor: message.requestor ?? "assistant",
        error: message.error ?? false,
        turn_idx: position,
        timestamp,
      };
    }
    const calls = message.tool_calls ?? null;
    return {
      role: message.role,
      content: message.content ?? null,
      tool_calls: calls
        ? calls.map((call) => ({
            id: call.id ?? "",
            name: call.name,
            arguments: plainPythonJson(call.arguments) as JsonValue,
            requestor: call.requestor ?? "assistant",
            arguments_json: pythonJsonDumps(call.arguments, { ensureAscii: true }),
          }))
        : null,
      is_audio: false,
      turn_idx: position,
      timestamp,
      cost: null,
      usage: message.usage ?? null,
      raw_data: null,
      generation_time_seconds: null,
      ...PARTICIPANT_FIELDS,
    };
  });
}

/**
 * A recorded message list (`tau2MessagesJson`, read back with JSON.parse) with each call's arguments as Python held
 * them: parsed from `arguments_json` (where JSON.parse made `2.0` a `2`), else the plain value for older records.
 */
export function tau2MessagesFromRecord(messages: readonly JsonValue[]): Tau2Message[] {
  return messages.map((message) => {
    const calls = (message as { tool_calls?: unknown } | null)?.tool_calls;
    if (!Array.isArray(calls)) return message as unknown as Tau2Message;
    const exact = calls.map((call: Record<string, unknown>) =>
      typeof call.arguments_json === "string" ? { ...call, arguments: parsePythonJson(call.arguments_json) } : call,
    );
    return { ...(message as object), tool_calls: exact } as unknown as Tau2Message;
  });
}

/** tau2's `get_now()`: local ISO time with microseconds and no zone (toolgym writes UTC). */
export function tau2Now(date: Date = new Date()): string {
  return `${date.toISOString().slice(0, 23)}000`;
}
