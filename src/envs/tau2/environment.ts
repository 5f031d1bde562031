import { PythonError } from "../../python-semantics/index.ts";
import { CowStore, DbHasher, deepFreeze } from "./store.ts";
import { bindArguments, exceptionText, findFunction, findTool, toJsonString, type ToolContext, type Toolkit, type ToolType } from "./toolkit.ts";
import type { EnvFunctionCall, InitialState, Tau2Message, Tau2ToolCall } from "./types.ts";

/** Everything the kit needs to know about one tau2 domain. */
export interface Tau2Domain {
  id: string;
  tools: Toolkit;
  userTools: Toolkit | null;
  /** Model fields declared `float` (their integral values print as `5.0`). */
  floatKeys: ReadonlySet<string>;
  /** The freshly loaded agent DB (deep-frozen, shared) and its model normaliser. */
  agentDb(): Record<string, unknown>;
  userDb(): Record<string, unknown> | null;
  normalizeAgent(raw: Record<string, unknown>): Record<string, unknown>;
  normalizeUser(raw: Record<string, unknown>): Record<string, unknown>;
  /** tau2's `Environment.sync_tools` (telecom: device state follows the line). */
  sync?(context: ToolContext): void;
}

export interface ToolOutcome {
  content: string;
  error: boolean;
}

const hashers = new WeakMap<Tau2Domain, DbHasher>();

function hasherFor(domain: Tau2Domain): DbHasher {
  let hasher = hashers.get(domain);
  if (!hasher) {
    hasher = new DbHasher({ sortKeys: true, floatKeys: domain.floatKeys });
    hashers.set(domain, hasher);
  }
  return hasher;
}

/** One tau2 `Environment`: an agent DB, an optional user DB, and tau2's tool-call semantics. */
export class Tau2Environment {
  agent: CowStore;
  user: CowStore | null;

  constructor(readonly domain: Tau2Domain) {
    this.agent = new CowStore(domain.agentDb());
    const userDb = domain.userDb();
    this.user = userDb ? new CowStore(userDb) : null;
    this.sync();
  }

  get context(): ToolContext {
    return { agent: this.agent, user: this.user };
  }

  private toolkitFor(requestor: "user" | "assistant"): Toolkit | null {
    return requestor === "user" ? this.domain.userTools : this.domain.tools;
  }

  toolType(name: string): ToolType | null {
    const tool = findTool(this.domain.tools, name) ?? (this.domain.userTools ? findTool(this.domain.userTools, name) : undefined);
    return tool?.type ?? null;
  }

  /** tau2's `make_tool_call`: runs the tool, no sync; throws what the Python tool would raise. */
  makeToolCall(name: string, requestor: "user" | "assistant", args: unknown): unknown {
    const toolkit = this.toolkitFor(requestor);
    if (!toolkit) throw new PythonError("ValueError", requestor === "user" ? "User tools not available" : "Tools not available");
    const tool = findTool(toolkit, name);
    if (!tool) throw new PythonError("ValueError", `Tool '${name}' not found.`);
    return tool.run(this.context, bindArguments(toolkit.className, tool, args));
  }

  /** tau2's `get_response`: the ToolMessage content and error flag; syncs after a successful call. */
  getResponse(call: Tau2ToolCall): ToolOutcome {
    try {
      const value = this.makeToolCall(call.name, call.requestor ?? "assistant", call.arguments);
      this.sync();
      return { content: toJsonString(value, this.domain.floatKeys), error: false };
    } catch (error) {
      if (!(error instanceof PythonError)) throw error;
      return { content: `Error: ${exceptionText(error)}`, error: true };
    }
  }

  sync(): void {
    this.domain.sync?.(this.context);
  }

  /** Runs a task's environment function (setup action or assertion) and syncs. */
  runEnvFunctionCall(call: EnvFunctionCall): unknown {
    const toolkit = call.env_type === "user" ? this.domain.userTools : this.domain.tools;
    if (!toolkit) throw new PythonError("AttributeError", `'NoneType' object has no attribute '${call.func_name}'`);
    const fn = findFunction(toolkit, call.func_name);
    if (!fn) throw new PythonError("AttributeError", `'${toolkit.className}' object has no attribute '${call.func_name}'`);
    const result = fn.run(this.context, bindArguments(toolkit.className, fn, call.arguments ?? {}));
    this.sync();
    return result;
  }

  runEnvAssertion(assertion: EnvFunctionCall & { assert_value?: boolean }): boolean {
    const result = this.runEnvFunctionCall(assertion);
    if (typeof result !== "boolean") throw new PythonError("ValueError", `Function ${assertion.func_name} returned ${typeof result} instead of bool`);
    return result === (assertion.assert_value ?? true);
  }

  /** tau2's `update_db`: the DB dump deep-merged with `data` (dicts merge, anything else replaces), re-validated. */
  private updateDb(store: CowStore, data: Record<string, unknown>, normalize: (raw: Record<string, unknown>) => Record<string, unknown>): void {
    store.replaceRoot(deepFreeze(normalize(deepMerge(store.root, data) as Record<string, unknown>)));
  }

  /** tau2's `set_state`: initialisation data, initialisation actions, then the history's tool calls. */
  setState(initial: InitialState | null | undefined, history: readonly Tau2Message[]): void {
    const data = initial?.initialization_data;
    if (data?.agent_data) {
      this.updateDb(this.agent, data.agent_data, this.domain.normalizeAgent);
      // tau2 then points the user toolkit at the agent's new DB instance.
      if (this.user) this.user = this.agent;
    }
    if (data?.user_data && this.user) {
      this.updateDb(this.user, data.user_data, this.domain.normalizeUser);
      this.agent = this.user;
    }
    for (const action of initial?.initialization_actions ?? []) this.runEnvFunctionCall(action);
    this.replay(history);
    this.sync();
  }

  /** Replays every tool call of a message list through `get_response`, as tau2's `set_state` does. */
  replay(messages: readonly Tau2Message[]): void {
    for (const message of messages) {
      if ((message.role === "assistant" || message.role === "user") && message.tool_calls) {
        for (const call of message.tool_calls) this.getResponse(call);
      }
    }
  }

  dbHash(): string {
    return hasherFor(this.domain).hash(this.agent.root);
  }

  /** tau2's DB check (agent and user DB hashes equal), decided without hashing. */
  sameDatabases(other: Tau2Environment): boolean {
    const hasher = hasherFor(this.domain);
    if (!hasher.equal(this.agent.root, other.agent.root)) return false;
    if (this.user === null || other.user === null) return this.user === other.user;
    return hasher.equal(this.user.root, other.user.root);
  }

  userDbHash(): string | null {
    return this.user ? hasherFor(this.domain).hash(this.user.root) : null;
  }
}

/** addict-style recursive update: nested dicts merge, every other value (lists included) replaces. */
export function deepMerge(base: unknown, update: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(update)) return update;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(update)) {
    merged[key] = isPlainObject(merged[key]) && isPlainObject(value) ? deepMerge(merged[key], value) : value;
  }
  return merged;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Map);
}
