import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An OpenAI-compatible server that plays tau2's three LLM parts from a script, so tau2's own runner and
 * `toolgym eval` can be driven by the same replies (test/fixtures/tau2/runner). Who is asking is read from
 * the request: the judge by its system prompt, the agent and the user by the model name (`SCENARIO` and
 * `SCENARIO/user`); the reply is chosen by the trial (the request's `seed`, an index into the scenario's
 * trial seeds), the position in the conversation (the number of the asker's own earlier messages) and how
 * many times that position was asked before (a re-run simulation asks again). Every request body is logged.
 */
export interface ScriptCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them (any text: `{"gb_amount": 2.0}`, or broken JSON). */
  arguments: string;
}

export interface ScriptMove {
  content?: string | null;
  tool_calls?: ScriptCall[];
  finish_reason?: string;
}

/** A move, or one move per asking of the position (the last one repeats), or one per trial. */
export type ScriptEntry = ScriptMove | { attempts: ScriptMove[] } | { trials: ScriptEntry[] };

export interface ScriptScenario {
  name: string;
  /** tau2's per-trial seeds of the run (seed 300: 626729, 373753, ...): the request's `seed` picks the trial. */
  trial_seeds: number[];
  agent: ScriptEntry[];
  user: ScriptEntry[];
  /** The judge's answers, one per asking (position 0 of each simulation attempt). */
  judge?: ScriptEntry[];
  /** The judge finds its scenario by this text in the conversation it grades. */
  marker: string;
}

export interface LoggedRequest {
  scenario: string;
  role: "agent" | "user" | "judge";
  trial: number;
  position: number;
  asked: number;
  body: Record<string, unknown>;
}

export interface Tau2ScriptServer {
  url: string;
  requests: LoggedRequest[];
  close(): Promise<void>;
}

const JUDGE_PROMPT = "You will be given a list of expected outcomes and a conversation";
const FALLBACK: ScriptMove = { content: "Is there anything else I can help you with?" };

type Body = { model?: string; messages?: Array<{ role?: string; content?: unknown }>; seed?: number };

function pick(entry: ScriptEntry | undefined, trial: number, asked: number): ScriptMove {
  if (entry === undefined) return FALLBACK;
  if ("trials" in entry) return pick(entry.trials[Math.min(trial, entry.trials.length - 1)], trial, asked);
  if ("attempts" in entry) return entry.attempts[Math.min(asked, entry.attempts.length - 1)] ?? FALLBACK;
  return entry;
}

function completion(model: string, move: ScriptMove): Record<string, unknown> {
  const calls = move.tool_calls?.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }));
  return {
    id: "chatcmpl-scripted",
    object: "chat.completion",
    created: 0,
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: move.content ?? null, ...(calls?.length ? { tool_calls: calls } : {}) },
        finish_reason: move.finish_reason ?? (calls?.length ? "tool_calls" : "stop"),
      },
    ],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

export async function startTau2ScriptServer(scenarios: readonly ScriptScenario[]): Promise<Tau2ScriptServer> {
  const byName = new Map(scenarios.map((scenario) => [scenario.name, scenario]));
  const asked = new Map<string, number>();
  const requests: LoggedRequest[] = [];

  const answer = (body: Body): { status: number; json: unknown } => {
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const system = typeof messages[0]?.content === "string" ? (messages[0].content as string) : "";
    const model = String(body.model ?? "");
    let role: LoggedRequest["role"];
    let scenario: ScriptScenario | undefined;
    if (system.includes(JUDGE_PROMPT)) {
      role = "judge";
      const text = messages.map((message) => String(message.content ?? "")).join("\n");
      scenario = scenarios.find((candidate) => text.includes(candidate.marker));
    } else {
      role = model.endsWith("/user") ? "user" : "agent";
      scenario = byName.get(role === "user" ? model.slice(0, -"/user".length) : model);
    }
    if (!scenario) return { status: 400, json: { error: { message: `no scripted scenario for model '${model}' (${role})` } } };
    const trial = Math.max(0, scenario.trial_seeds.indexOf(Number(body.seed)));
    // The asker's own earlier messages: the agent's (after tau2's greeting), the user's (its view flips roles).
    const own = messages.filter((message) => message.role === "assistant").length;
    const position = role === "judge" ? 0 : role === "agent" ? Math.max(0, own - 1) : own;
    const key = `${scenario.name}\u0000${role}\u0000${trial}\u0000${position}`;
    const count = asked.get(key) ?? 0;
    asked.set(key, count + 1);
    requests.push({ scenario: scenario.name, role, trial, position, asked: count, body: body as Record<string, unknown> });
    const script = role === "judge" ? (scenario.judge ?? []) : scenario[role];
    return { status: 200, json: completion(model, pick(script[position], trial, count)) };
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= 16 * 1024 * 1024) chunks.push(chunk);
    });
    request.on("end", () => {
      if (request.method === "GET" && request.url?.endsWith("/models")) {
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data: [{ id: "scripted", object: "model" }] }));
        return;
      }
      let body: Body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Body;
      } catch {
        response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "the body is not JSON" } }));
        return;
      }
      const { status, json } = answer(body);
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
