import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A chat-completions endpoint that answers its first request (a simulated user's opening) and holds every
 * later one open, counting those whose client gave up: the fault a real model server cannot be made to
 * produce on demand (a reply that takes minutes). Bodies are kept for the tests to inspect.
 */
export interface HeldModel {
  url: string;
  bodies: Record<string, unknown>[];
  held: number;
  aborted: number;
  close(): Promise<void>;
}

export async function startHeldModel(opening: string | null = "Hi, I need help with my order."): Promise<HeldModel> {
  const waiting = new Set<ServerResponse>();
  const model: HeldModel = { url: "", bodies: [], held: 0, aborted: 0, close: async () => undefined };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      model.bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>);
      // No opening: every request is refused, as a model server refuses a request it cannot serve.
      if (opening === null) {
        response.writeHead(400, { "content-type": "application/json" });
        return void response.end(JSON.stringify({ error: { message: "model not loaded", type: "BadRequestError" } }));
      }
      if (model.bodies.length === 1) {
        const reply = {
          id: "x",
          object: "chat.completion",
          created: 0,
          model: "tiny",
          choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: opening } }],
        };
        response.writeHead(200, { "content-type": "application/json" });
        return void response.end(JSON.stringify(reply));
      }
      model.held++;
      waiting.add(response);
      response.on("close", () => {
        if (waiting.delete(response)) model.aborted++;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  model.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  model.close = () =>
    new Promise<void>((resolve) => {
      for (const response of waiting) response.destroy();
      waiting.clear();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return model;
}
