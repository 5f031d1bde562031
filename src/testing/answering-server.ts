import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { ChatRequestBody, ScriptedReply } from "./fault-server.ts";

/** What the server answers one chat request with: a status and body, or nothing (a hung server). */
export type Answer = { status: number; body: string } | "hang";

/**
 * A chat-completions server on 127.0.0.1 whose every answer a test writes (status and body), for the faults a
 * real server cannot be made to produce on demand: a context overflow (HTTP 400), a 5 MB reply, an outage, a hang.
 * `answer` may be swapped while it runs (`setAnswer`: the outage ends).
 */
export async function startAnsweringServer(
  first: (body: ChatRequestBody) => Answer,
): Promise<{ url: string; setAnswer(next: (body: ChatRequestBody) => Answer): void; close(): Promise<void> }> {
  let answer = first;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.method === "GET") return void response.writeHead(200).end(JSON.stringify({ data: [{ id: "scripted" }] }));
      const reply = answer(JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequestBody);
      if (reply === "hang") return;
      response.writeHead(reply.status, { "content-type": "application/json" }).end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    setAnswer: (next) => {
      answer = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A chat completion whose message makes the reply's tool calls (`extra`: more top-level fields). */
export function toolReply(reply: ScriptedReply, extra: Record<string, unknown> = {}): string {
  const calls = "toolCalls" in reply ? reply.toolCalls : [];
  const tool_calls = calls.map((call, position) => ({
    id: `call_${position}`,
    type: "function",
    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
  }));
  return JSON.stringify({
    id: "x",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls }, finish_reason: "tool_calls" }],
    ...extra,
  });
}
