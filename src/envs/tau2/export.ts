import type { ExportEpisode, JsonValue, RunExporter, ToolSpec } from "../../core/index.ts";
import { customerToolSpec } from "./customer-tool.ts";

/**
 * `toolgym export RUN --format tau2-sft`: each model turn of each episode as one AReaL-layout row
 * `{messages, answer: {role, content, thinking, tool_calls}, metadata}` — the layout `toolgym sft tau2`
 * reads. The context is the conversation before the turn as the agent saw it, and `tools` the schemas it was
 * offered (with `send_message_to_user` under `customer: "tool"`), so a row renders the prompt the model saw.
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

export function exportRows(episode: ExportEpisode, domainTools: readonly ToolSpec[]): Row[] {
  const trajectory = (episode.trajectory ?? {}) as Row;
  const config = ((trajectory.env as Row | undefined)?.config ?? {}) as Row;
  const tools = (config.customer === "tool" ? [...domainTools, customerToolSpec] : domainTools) as unknown as JsonValue[];
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
      tools,
      metadata: { source_dialog_id: String(trajectory.id ?? episode.exampleId ?? ""), turn_index: turnIndex, reward, correct },
    };
  });
}

export function tau2SftExporter(domainTools: () => readonly ToolSpec[]): RunExporter {
  return {
    description: "AReaL tau2 SFT rows (one per model turn, with the tools offered) that `toolgym sft tau2` reads",
    write(episodes) {
      const tools = domainTools();
      return episodes.flatMap((episode) => exportRows(episode, tools).map((row) => `${JSON.stringify(row)}\n`)).join("");
    },
  };
}
