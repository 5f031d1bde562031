import type { Protocol } from "../server/protocol.ts";

export interface ProtocolReply {
  status: number;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: Record<string, any>;
}

/**
 * Asks the protocol core (`Protocol.answer`) one request, as a test would over HTTP but without a socket:
 * `body` is sent as JSON unless it is a string; `headers` may carry authorization, host and origin.
 */
export async function ask(
  protocol: Pick<Protocol, "answer">,
  method: string,
  target: string,
  body?: unknown,
  headers: { authorization?: string; host?: string; origin?: string } = {},
): Promise<ProtocolReply> {
  const text = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
  const answer = await protocol.answer({ method, target, body: text, ...headers });
  return { status: answer.status, text: answer.text, json: JSON.parse(answer.text) as ProtocolReply["json"] };
}
