import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hash31 } from "../agents/openai/agent.ts";
import type { Message, ToolCall } from "../core/index.ts";

/** What the scripted model answers (before any fault is applied). */
export type ScriptedReply = { toolCalls: Array<{ name: string; arguments: Record<string, unknown> }> } | { content: string };

export interface ChatRequestBody {
  model?: unknown;
  messages?: unknown;
  tools?: unknown;
  [key: string]: unknown;
}

/** Transport faults the client must retry; model faults it must count as format errors. */
export const TRANSPORT_FAULTS = ["http_500", "http_503", "http_429", "reset", "malformed_json", "timeout"] as const;
export const MODEL_FAULTS = ["truncated", "invalid_arguments", "unparsed_tool_call", "hermes_in_content", "empty", "unknown_tool", "no_tool_call"] as const;
export type FaultKind = (typeof TRANSPORT_FAULTS)[number] | (typeof MODEL_FAULTS)[number];

export interface FaultServerOptions {
  respond: (body: ChatRequestBody) => ScriptedReply;
  /** Added before every response, in ms. */
  latencyMs?: number;
  /** Fraction of requests that get a fault (default 0). */
  faultRate?: number;
  faults?: readonly FaultKind[];
  /** Faults are a pure function of (seed, request body, how often that body was seen): deterministic under any concurrency. */
  seed?: number;
  /** Called with every parsed request body (tests inspect them). */
  onRequest?: (body: ChatRequestBody) => void;
}

export interface FaultServer {
  url: string;
  server: Server;
  /**
   * `byFault` counts faults actually delivered (a fault drawn for a request the client had already given up
   * on is not counted; `timeout` faults never answer); `aborted` counts requests the client closed unanswered.
   */
  counts: { requests: number; ok: number; invalid: number; aborted: number; byFault: Record<string, number> };
  /** From now on no chat request is answered (those waiting included): each stays open until its client closes it. */
  hold(): void;
  /** Answers requests again (those received while held stay unanswered). */
  release(): void;
  /** Resolves once no chat request is open: every one answered, or closed by its client. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** Why a request body is not a well-formed chat-completions request, or null. */
export function validateChatRequest(body: ChatRequestBody): string | null {
  if (typeof body.model !== "string" || body.model === "") return "model must be a non-empty string";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages must be a non-empty array";
  for (const message of body.messages as Array<Record<string, unknown>>) {
    if (!["system", "user", "assistant", "tool"].includes(String(message?.role))) return `bad role ${String(message?.role)}`;
    if (message.role === "tool" && typeof message.tool_call_id !== "string") return "tool message without tool_call_id";
    if (message.role === "assistant" && Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls as ToolCall[])
        if (typeof call.function?.arguments !== "string") return "tool_calls[].function.arguments must be a JSON string";
    }
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return "tools must be an array";
    for (const tool of body.tools as Array<Record<string, unknown>>) {
      const fn = tool?.function as Record<string, unknown> | undefined;
      if (tool?.type !== "function" || typeof fn?.name !== "string" || typeof fn?.parameters !== "object")
        return "tools[] must be {type: function, function: {name, parameters}}";
    }
  }
  return null;
}

/**
 * The `mock` environment's oracle played by a server: reads the key from the user prompt, looks it up,
 * then finishes with the value from the first successful lookup result.
 */
export function mockOracleResponder(body: ChatRequestBody): ScriptedReply {
  const messages = body.messages as Message[];
  const question = messages.find((message) => message.role === "user")?.content ?? "";
  const key = /key '([^']+)'/.exec(question)?.[1] ?? "";
  for (const message of messages) {
    if (message.role !== "tool") continue;
    try {
      const result = JSON.parse(message.content) as { value?: unknown };
      if (typeof result.value === "string") return { toolCalls: [{ name: "finish", arguments: { answer: result.value } }] };
    } catch {
      // not JSON: keep looking
    }
  }
  return { toolCalls: [{ name: "lookup", arguments: { key } }] };
}

function completion(message: Record<string, unknown>, finishReason: string, turn: number): string {
  return JSON.stringify({
    id: `chatcmpl-${turn}`,
    object: "chat.completion",
    created: 0,
    model: "scripted",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finishReason }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
}

function replyBody(reply: ScriptedReply, fault: FaultKind | null, turn: number): string {
  const calls = "toolCalls" in reply ? reply.toolCalls : [];
  const ids = calls.map((_, position) => `call_${turn}_${position}`);
  const first = calls[0] ?? { name: "finish", arguments: {} };
  switch (fault) {
    case "truncated":
      return completion({ content: '<tool_call>\n{"name": "' }, "length", turn);
    case "invalid_arguments":
      return completion(
        { content: null, tool_calls: [{ id: ids[0] ?? `call_${turn}_0`, type: "function", function: { name: first.name, arguments: '{"key": ' } }] },
        "tool_calls",
        turn,
      );
    case "unparsed_tool_call":
      return completion({ content: `<tool_call>\n{"name": "${first.name}", "arguments": {oops}}\n</tool_call>` }, "stop", turn);
    case "hermes_in_content":
      return completion(
        { content: calls.map((call) => `<tool_call>\n${JSON.stringify({ name: call.name, arguments: call.arguments })}\n</tool_call>`).join("\n") },
        "stop",
        turn,
      );
    case "empty":
      return completion({ content: "" }, "stop", turn);
    case "unknown_tool":
      return completion(
        { content: null, tool_calls: [{ id: `call_${turn}_0`, type: "function", function: { name: "teleport", arguments: "{}" } }] },
        "tool_calls",
        turn,
      );
    case "no_tool_call":
      return completion({ content: "I will think about it.", reasoning: "hmm" }, "stop", turn);
    default:
      if ("content" in reply) return completion({ content: reply.content }, "stop", turn);
      return completion(
        {
          content: null,
          tool_calls: calls.map((call, position) => ({
            id: ids[position],
            type: "function",
            function: { name: call.name, arguments: JSON.stringify(call.arguments) },
          })),
        },
        "tool_calls",
        turn,
      );
  }
}

/** Starts a fault-injecting OpenAI-compatible chat-completions server on 127.0.0.1 (random port). */
export async function startFaultServer(options: FaultServerOptions): Promise<FaultServer> {
  const faults = options.faults ?? [...TRANSPORT_FAULTS, ...MODEL_FAULTS];
  const rate = options.faultRate ?? 0;
  const seen = new Map<number, number>();
  const counts: FaultServer["counts"] = { requests: 0, ok: 0, invalid: 0, aborted: 0, byFault: {} };
  const timers = new Set<NodeJS.Timeout>();
  const open = new Set<ServerResponse>();
  let idleWaiters: Array<() => void> = [];
  let held = false;
  const settle = () => {
    if (open.size > 0) return;
    for (const wake of idleWaiters) wake();
    idleWaiters = [];
  };
  const later = (ms: number, run: () => void) => {
    if (ms <= 0) return run();
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };

  const handle = (request: IncomingMessage, response: ServerResponse, text: string) => {
    counts.requests++;
    if (request.method === "GET" && request.url?.endsWith("/models")) {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data: [{ id: "scripted", object: "model" }] }));
      return;
    }
    let body: ChatRequestBody;
    try {
      body = JSON.parse(text) as ChatRequestBody;
    } catch {
      body = {};
    }
    const problem = validateChatRequest(body);
    if (problem) {
      counts.invalid++;
      response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: problem, type: "invalid_request_error" } }));
      return;
    }
    options.onRequest?.(body);
    const key = hash31(text);
    const attempt = seen.get(key) ?? 0;
    seen.set(key, attempt + 1);
    const draw = hash31(`${options.seed ?? 0}\u0000${key}\u0000${attempt}`) / 0x80000000;
    const fault = draw < rate ? (faults[hash31(`${draw}`) % faults.length] as FaultKind) : null;
    let answered = false;
    const deliver = () => {
      answered = true;
      if (fault) counts.byFault[fault] = (counts.byFault[fault] ?? 0) + 1;
    };
    open.add(response);
    response.on("close", () => {
      open.delete(response);
      if (!answered) counts.aborted++;
      settle();
    });
    const turn = (body.messages as Message[]).filter((message) => message.role === "assistant").length + 1;
    const latency = options.latencyMs ?? 0;
    // A `timeout` fault never answers: the client's time-out must fire.
    if (fault === "timeout") {
      counts.byFault.timeout = (counts.byFault.timeout ?? 0) + 1;
      return;
    }
    later(latency, () => {
      if (response.destroyed || answered || held) return;
      deliver();
      if (fault === "reset") return void request.socket.destroy();
      if (fault === "http_500" || fault === "http_503" || fault === "http_429") {
        const status = Number(fault.slice(5));
        response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `injected ${status}` } }));
        return;
      }
      if (fault === "malformed_json") {
        response.writeHead(200, { "content-type": "application/json" }).end('{"id": "chatcmpl-x", "choices": [{"message": ');
        return;
      }
      counts.ok++;
      const payload = replyBody(options.respond(body), fault, turn);
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }).end(payload);
    });
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => handle(request, response, Buffer.concat(chunks).toString("utf8")));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    server,
    counts,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
    },
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settle();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
