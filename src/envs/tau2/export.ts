import type { ExportEpisode, JsonValue, RunExporter } from "../../core/index.ts";

/**
 * `toolgym export RUN --format tau2-sft`: each model turn of each episode as one AReaL-layout row
 * `{messages, answer: {role, content, thinking, tool_calls}, metadata}` — the layout `toolgym sft tau2`
 * reads. The context is the conversation before the turn as the agent saw it.
 */
type Row = Record<string, JsonValue>;

function toolCallsOf(message: Row): JsonValue[] {
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as Row[]) : [];
  return calls.map((call) => ({ id: call.id ?? null, type: "function", function: call.function ?? null }));
}

function contextMessage(message: Row): Row {
  if (message.role !== "assistant") return { ...message };
  const calls = toolCallsOf(message);
  return { role: "assistant", content: message.content ?? null, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}

export function exportRows(episode: ExportEpisode): Row[] {
  const trajectory = (episode.trajectory ?? {}) as Row;
  const messages = (Array.isArray(trajectory.messages) ? trajectory.messages : []) as Row[];
  const turns = typeof trajectory.turns === "number" ? trajectory.turns : 0;
  const assistantPositions = messages.flatMap((message, position) => (message.role === "assistant" ? [position] : []));
  // Each agent turn leaves exactly one assistant message, so the model's turns are the last `turns` of them
  // (earlier ones are tau2's greeting or a task's message history).
  const modelTurns = turns > 0 ? assistantPositions.slice(-turns) : [];
  const reward = episode.metrics.reward ?? null;
  const correct = episode.metrics.pass === 1 ? 1 : 0;
  return modelTurns.map((position, turnIndex) => {
    const message = messages[position] as Row;
    const calls = toolCallsOf(message);
    return {
      messages: messages.slice(0, position).map(contextMessage),
      answer: {
        role: "assistant",
        content: (message.content as JsonValue) ?? "",
        thinking: (message.reasoning_content as JsonValue) ?? null,
        tool_calls: calls.length > 0 ? calls : null,
      },
      metadata: { source_dialog_id: String(trajectory.id ?? episode.exampleId ?? ""), turn_index: turnIndex, reward, correct },
    };
  });
}

export const tau2SftExporter: RunExporter = {
  description: "AReaL tau2 SFT rows (one per model turn) that `toolgym sft tau2` reads",
  write(episodes) {
    return episodes.flatMap((episode) => exportRows(episode).map((row) => `${JSON.stringify(row)}\n`)).join("");
  },
};
