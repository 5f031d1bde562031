import { request } from "node:http";
import WebSocket from "ws";

/** Plain HTTP and WebSocket requests to a running `toolgym serve`, for the server's tests. */
export interface Reply {
  status: number;
  text: string;
  json: { error?: { code: string; message: string } } & Record<string, unknown>;
}

export function send(
  port: number,
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string>; timeoutMilliseconds?: number } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: "127.0.0.1", port, method, path, agent: false, headers: { "content-type": "application/json", ...options.headers } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json = {} as Reply["json"];
          try {
            json = JSON.parse(text) as Reply["json"];
          } catch {
            // not JSON: the assertion on the status says what came
          }
          resolve({ status: response.statusCode ?? 0, text, json });
        });
      },
    );
    const limit = options.timeoutMilliseconds ?? 10_000;
    outgoing.setTimeout(limit, () => outgoing.destroy(new Error(`no answer within ${limit} ms`)));
    outgoing.on("error", reject);
    outgoing.end(options.body);
  });
}

export const createSessionRequest = (port: number, body: unknown, headers: Record<string, string> = {}) =>
  send(port, "POST", "/sessions", { body: JSON.stringify(body), headers });

/** Opens a WebSocket and resolves with what the upgrade answered: "open", or the refusing status. */
export function openSocket(url: string, headers: Record<string, string> = {}): Promise<{ outcome: "open" | number; socket: WebSocket }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, { headers });
    socket.once("open", () => resolve({ outcome: "open", socket }));
    socket.once("unexpected-response", (_request, response) => resolve({ outcome: response.statusCode ?? 0, socket }));
    socket.once("error", () => resolve({ outcome: 0, socket }));
  });
}

export function nextFrame(socket: WebSocket): Promise<{ type: string; data: Record<string, unknown> }> {
  return new Promise((resolve) => socket.once("message", (data) => resolve(JSON.parse(String(data)))));
}

/** The promise rejections not handled while `run` ran (and a few ticks after), instead of a crash. */
export async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (reason: unknown): void => void seen.push(reason);
  process.on("unhandledRejection", listener);
  try {
    await run();
    for (let tick = 0; tick < 5; tick++) await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    process.removeListener("unhandledRejection", listener);
  }
  return seen;
}
