import { ServerError, ToolgymError, type JsonValue } from "../core/index.ts";
import { parseObject } from "./answers.ts";
import { withoutAddresses } from "./external-config.ts";
import { createSession, type Protocol } from "./protocol.ts";
import { describeSession, type Session, type SessionStore } from "./session-store.ts";

/**
 * OpenEnv's WebSocket protocol (`/ws`, one environment per connection), spoken over toolgym sessions:
 * client frames `reset` / `step` / `state` / `close` / `mcp`, server frames `observation` / `state` /
 * `mcp` / `error` (huggingface/OpenEnv `env_server`). Step actions are the MCP-style actions
 * `{type: "list_tools"}` and `{type: "call_tool", tool_name, arguments}`.
 */
export type Frame = { type: string; data?: unknown };

export interface OpenEnvReply {
  frames: Frame[];
  /** True after a `close` frame: the transport closes the socket once the frames are sent. */
  close: boolean;
}

type ErrorCode = "INVALID_JSON" | "UNKNOWN_TYPE" | "VALIDATION_ERROR" | "EXECUTION_ERROR" | "CAPACITY_REACHED" | "SESSION_ERROR";

function errorFrame(code: ErrorCode, message: string): Frame {
  return { type: "error", data: { message, code } };
}

function codeFor(error: ServerError): ErrorCode {
  if (error.code === "MAX_SESSIONS") return "CAPACITY_REACHED";
  if (error.code === "SESSION_UNKNOWN") return "SESSION_ERROR";
  if (error.code === "TOOL_FAILED" || error.code === "REWARD_FAILED" || error.code === "TASK_FAILED") return "EXECUTION_ERROR";
  return "VALIDATION_ERROR";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * One WebSocket connection: it holds at most one session at a time (a `reset` closes the one before), which
 * is its session quota; the sessions count towards its token's quota too.
 */
export class OpenEnvConnection {
  private session: Session | undefined;
  /** Set once the connection ends: a reset still opening its session then closes it. */
  private ended = false;
  private readonly protocol: Pick<Protocol, "store" | "resources" | "callTool">;
  private readonly store: SessionStore;
  private readonly client: string;
  private readonly defaultEnv: string | undefined;

  constructor(options: { protocol: Pick<Protocol, "store" | "resources" | "callTool">; client?: string; defaultEnv?: string }) {
    this.protocol = options.protocol;
    this.store = options.protocol.store;
    this.client = options.client ?? "anonymous";
    this.defaultEnv = options.defaultEnv;
  }

  /** Handles one text frame; never throws. */
  async handle(text: string): Promise<OpenEnvReply> {
    let message: Record<string, unknown>;
    try {
      // The core's body parser, so a frame meets the JSON, object and depth checks of an HTTP body, with the same messages.
      message = parseObject(text);
    } catch (error) {
      const refusal = error as ServerError;
      return { frames: [errorFrame(refusal.code === "INVALID_JSON" ? "INVALID_JSON" : "VALIDATION_ERROR", refusal.message)], close: false };
    }
    if (typeof message.type !== "string") return { frames: [errorFrame("VALIDATION_ERROR", "a frame is a JSON object {type, data}")], close: false };
    try {
      switch (message.type) {
        case "reset":
          return { frames: [await this.reset(message.data)], close: false };
        case "step":
          return { frames: [await this.step(message.data)], close: false };
        case "state":
          return { frames: [this.state()], close: false };
        case "close":
          this.dispose();
          return { frames: [], close: true };
        case "mcp":
          return { frames: [{ type: "mcp", data: await this.mcp(message.data) }], close: false };
        default:
          return {
            frames: [errorFrame("UNKNOWN_TYPE", `unknown frame type '${message.type.slice(0, 40)}'; expected reset, step, state, close or mcp`)],
            close: false,
          };
      }
    } catch (error) {
      if (error instanceof ServerError) return { frames: [errorFrame(codeFor(error), error.message)], close: false };
      const text = ToolgymError.isInstance(error) ? error.message : String((error as Error)?.message ?? error);
      return { frames: [errorFrame("EXECUTION_ERROR", withoutAddresses(text))], close: false };
    }
  }

  /** Ends the connection (socket closed or `close` frame): closes its session, and any a pending reset opens later. */
  dispose(): void {
    this.ended = true;
    this.closeSession();
  }

  private closeSession(): void {
    if (this.session) this.store.close(this.session.id);
    this.session = undefined;
  }

  private current(): Session {
    if (!this.session)
      throw new ServerError({
        code: "SESSION_UNKNOWN",
        status: 400,
        message: 'no episode yet; send {"type": "reset", "data": {"env": ..., "seed": ...}} first',
      });
    return this.store.get(this.session.id);
  }

  private async reset(data: unknown): Promise<Frame> {
    if (data !== undefined && data !== null && !isObject(data))
      throw new ServerError({ code: "INVALID_FIELD", status: 400, message: "reset data must be an object {env, split, seed, index, config, max_turns}" });
    const options = data ?? {};
    this.closeSession();
    const env = options.env ?? this.defaultEnv;
    if (env === undefined) throw new ServerError({ code: "INVALID_FIELD", status: 400, message: "reset needs data.env (or connect to /ws?env=ID)" });
    // Every field, so those POST /sessions refuses are refused here too (createSession), never dropped.
    const body: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(options)) if (value !== undefined) body[key] = value;
    body.env = env;
    const session = await createSession(this.protocol, body, this.client);
    // A socket that closed while the session was opening (a simulated user's first message, a data file) leaves none behind.
    if (this.ended) {
      this.store.close(session.id);
      throw new ServerError({ code: "SESSION_UNKNOWN", status: 400, message: "the connection closed while the session was opening" });
    }
    this.session = session;
    const description = describeSession(this.session);
    return { type: "observation", data: { observation: { ...description, episode_id: description.session_id }, reward: null, done: false } };
  }

  private async step(data: unknown): Promise<Frame> {
    if (!isObject(data))
      throw new ServerError({
        code: "INVALID_FIELD",
        status: 400,
        message: "step data must be an action object, e.g. {type: 'call_tool', tool_name, arguments}",
      });
    const session = this.current();
    if (data.type === "list_tools") {
      return { type: "observation", data: { observation: { tools: this.toolList() }, reward: null, done: session.driver.episode.done } };
    }
    if (data.type !== "call_tool")
      throw new ServerError({ code: "INVALID_FIELD", status: 400, message: "step action type must be 'call_tool' or 'list_tools'" });
    const outcome = await this.protocol.callTool(session.id, { name: data.tool_name, arguments: data.arguments });
    const reward = outcome.done ? (await this.store.reward(session.id)).total : null;
    const error = outcome.is_error
      ? {
          error_type:
            outcome.error_kind === "unknown_tool" ? "tool_not_found" : outcome.error_kind === "invalid_arguments" ? "invalid_args" : "execution_error",
          message: outcome.content,
        }
      : null;
    return { type: "observation", data: { observation: { tool_name: data.tool_name, result: outcome.content, error }, reward, done: outcome.done } };
  }

  private state(): Frame {
    if (!this.session) return { type: "state", data: { episode_id: null, step_count: 0 } };
    const session = this.current();
    return { type: "state", data: { episode_id: session.id, step_count: session.calls, env: session.env.id, done: session.driver.episode.done } };
  }

  private toolList(): JsonValue[] {
    return this.current().driver.episode.tools.map((tool) => ({
      name: tool.function.name,
      description: tool.function.description,
      inputSchema: tool.function.parameters,
      input_schema: tool.function.parameters,
    }));
  }

  /** MCP JSON-RPC 2.0 over the socket: `tools/list` and `tools/call`. */
  private async mcp(data: unknown): Promise<Record<string, unknown>> {
    const request = isObject(data) ? data : {};
    const id = (request.id as JsonValue | undefined) ?? null;
    const error = (code: number, message: string) => ({ jsonrpc: "2.0", id, error: { code, message } });
    if (request.jsonrpc !== "2.0" || typeof request.method !== "string") return error(-32600, "invalid JSON-RPC request: need {jsonrpc: '2.0', method, id}");
    const params = isObject(request.params) ? request.params : {};
    try {
      if (request.method === "tools/list") return { jsonrpc: "2.0", id, result: { tools: this.toolList() } };
      if (request.method === "tools/call") {
        const outcome = await this.protocol.callTool(this.current().id, { name: params.name, arguments: params.arguments });
        return {
          jsonrpc: "2.0",
          id,
          result: { content: [{ type: "text", text: outcome.content }], isError: outcome.is_error, structuredContent: { done: outcome.done } },
        };
      }
      return error(-32601, `method '${request.method.slice(0, 40)}' not found; supported: tools/list, tools/call`);
    } catch (caught) {
      // A call the route answers 400 (its name or arguments malformed) is JSON-RPC's invalid params.
      if (caught instanceof ServerError && caught.status === 400) return error(-32602, caught.message);
      return error(-32000, caught instanceof Error ? caught.message : String(caught));
    }
  }
}
