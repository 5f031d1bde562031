import assert from "node:assert/strict";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { after, before, describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import WebSocket from "ws";
import type { AnyEnvironment, ToolSpec } from "../src/core/index.ts";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";

/**
 * The standing hostile suite of `toolgym serve` (issue 36): property-based fuzzing (fast-check) of every
 * route's body, every WebSocket and MCP frame, and every tool's arguments for every registered environment.
 * Each case must be answered without a 5xx, a crash, an unhandled rejection or a stall of the event loop over
 * 100 ms (perf_hooks.monitorEventLoopDelay; a stall is replayed alone twice before it counts, so a machine
 * busy with other work does not fail the suite); at the end, with every session closed, the heap must be back
 * near where it started. Each property runs for a bounded time (TOOLGYM_FUZZ_SECONDS, default 5 s each).
 * The seed is printed; TOOLGYM_FUZZ_SEED=<seed> replays a run.
 */
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;
const SEED = process.env.TOOLGYM_FUZZ_SEED ? Number(process.env.TOOLGYM_FUZZ_SEED) : Date.now() % 2 ** 31;
const SECONDS = Number(process.env.TOOLGYM_FUZZ_SECONDS ?? 5);
const STALL_MILLISECONDS = 100;
const TOKEN = "fuzz-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const environments = ENVIRONMENTS as Record<string, AnyEnvironment>;
const ENV_IDS = Object.keys(environments);
console.error(`server fuzz seed ${SEED} (replay: TOOLGYM_FUZZ_SEED=${SEED} npx tsx --test test/server-fuzz.test.ts)`);

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

// ---- Arbitraries ----------------------------------------------------------------------------------------

/** Long runs of one character between others: what makes a backtracking regular expression quadratic. */
const runString = fc
  .tuple(
    fc.constantFrom("'", '"', "`", " ", "a", "1", ",", ".", "\\", "\n"),
    fc.integer({ min: 5000, max: 20_000 }),
    fc.constantFrom("a", "b", "a "),
    fc.constantFrom("b", "1", ".", " b"),
  )
  .map(([unit, count, prefix, suffix]) => prefix + unit.repeat(count) + suffix);

/** Strings a hostile client sends: ordinary text, long runs, and names objects have already. */
const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
  { weight: 2, arbitrary: runString },
  { weight: 1, arbitrary: fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "", " ", "null", "NaN") },
);
const hostileNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1e9, 2 ** 53, -(2 ** 53), 1e308, 0.5, -0));
const leaf = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null));
const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.dictionary(hostileString, tie("value"), { maxKeys: 4 }),
})).value;

/** A value of a JSON-schema property's type most of the time, anything otherwise. */
function valueFor(schema: Record<string, unknown> | undefined): fc.Arbitrary<unknown> {
  const type = schema?.type;
  const typed: fc.Arbitrary<unknown> =
    Array.isArray(schema?.enum) && schema.enum.length > 0
      ? fc.constantFrom(...(schema.enum as unknown[]))
      : type === "string"
        ? fc.oneof({ weight: 2, arbitrary: fc.string({ maxLength: 40 }) }, { weight: 3, arbitrary: runString }, { weight: 1, arbitrary: hostileString })
        : type === "integer"
          ? fc.oneof(fc.integer({ min: -5, max: 50 }), hostileNumber)
          : type === "number"
            ? hostileNumber
            : type === "boolean"
              ? fc.boolean()
              : type === "array"
                ? fc.array(valueFor(schema?.items as Record<string, unknown> | undefined), { maxLength: 4 })
                : hostileJson;
  return fc.oneof({ weight: 9, arbitrary: typed }, { weight: 1, arbitrary: hostileJson });
}

/** Arguments for a tool: its required parameters and some optional ones (so most calls reach the tool), unexpected ones, or anything. */
function argumentsFor(tool: ToolSpec | undefined): fc.Arbitrary<unknown> {
  const parameters = (tool?.function.parameters ?? {}) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  const properties = parameters.properties ?? {};
  const required = (parameters.required ?? []).filter((name) => Object.hasOwn(properties, name));
  const shaped = fc.record(Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, valueFor(schema)])), { requiredKeys: required });
  const extra = fc.tuple(shaped, fc.dictionary(hostileString, hostileJson, { minKeys: 1, maxKeys: 2 })).map(([known, added]) => ({ ...added, ...known }));
  return fc.oneof({ weight: 8, arbitrary: shaped }, { weight: 1, arbitrary: extra }, { weight: 1, arbitrary: hostileJson });
}

/** A session request body: mostly well-formed around a registered environment, with fields fuzzed. */
const sessionBody = fc
  .tuple(
    fc.record(
      {
        env: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...ENV_IDS) }, { weight: 1, arbitrary: hostileJson }),
        split: fc.oneof(fc.constantFrom("train", "eval", "test", "dev"), hostileJson),
        seed: fc.oneof(fc.nat(50), hostileJson),
        index: fc.oneof(fc.nat(50), hostileJson),
        config: fc.oneof(
          hostileJson,
          hostileJson.map((value) => JSON.stringify(value)),
        ),
        max_turns: fc.oneof(fc.integer({ min: -2, max: 2000 }), hostileJson),
      },
      { requiredKeys: ["env"] },
    ),
    fc.option(fc.tuple(hostileString, hostileJson), { freq: 6 }),
  )
  .map(([known, extra]) => (extra ? { [extra[0]]: extra[1], ...known } : known));

// ---- The server and its checks ---------------------------------------------------------------------------

describe("toolgym serve under property-based fuzzing (issue 36)", () => {
  let server: RunningServer;
  let base: string;
  let tools: Record<string, ToolSpec[]>;
  const created = new Set<string>();
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  let heapBefore = 0;

  async function ask(method: string, path: string, body?: string, headers: Record<string, string> = AUTH): Promise<{ status: number; json: unknown }> {
    const response = await fetch(base + path, {
      method,
      body,
      headers: { "content-type": "application/json", ...headers },
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      assert.fail(`${method} ${path}: answered ${response.status} with text that is not JSON: ${text.slice(0, 120)}`);
    }
    assert.ok(response.status < 500, `${method} ${path} ${body?.slice(0, 200)}: answered ${response.status} ${text.slice(0, 300)}`);
    if (response.status >= 400) assert.equal(typeof (json as { error?: { code?: unknown } }).error?.code, "string", "an error names its code");
    const id = (json as { session_id?: unknown }).session_id;
    if (response.status === 201 && typeof id === "string") created.add(id);
    return { status: response.status, json };
  }

  /**
   * Empties the delay histogram, then waits for its first sample: the first sample after `reset()` only sets
   * the monitor's start time, so a stall beginning right after a reset would not be recorded at all.
   */
  async function resetDelay(): Promise<void> {
    delay.reset();
    while (delay.count === 0) await sleep(5);
  }

  /**
   * Runs a case; a stall over the limit counts only if the case stalls again twice when replayed alone. The
   * histogram is not reset before a case (a reset can hide the stall right after it): it holds only cases
   * that passed, and is emptied after a stall a replay cleared.
   */
  async function withinLoopBudget(name: string, run: () => Promise<void>): Promise<void> {
    await run();
    await sleep(12);
    if (delay.max / 1e6 <= STALL_MILLISECONDS) return;
    const stalls: number[] = [Math.round(delay.max / 1e6)];
    for (let replay = 0; replay < 2; replay++) {
      await sleep(50);
      await resetDelay();
      await run();
      await sleep(12);
      stalls.push(Math.round(delay.max / 1e6));
      if (delay.max / 1e6 <= STALL_MILLISECONDS) return;
    }
    assert.fail(`${name}: the event loop stalled ${stalls.join(", ")} ms (over ${STALL_MILLISECONDS} ms each time)`);
  }

  /** Cases run per property, printed at the end (the time bound decides how many on a given machine). */
  const cases: Record<string, number> = {};
  const count = (property: string): void => void (cases[property] = (cases[property] ?? 0) + 1);
  const budget = (numRuns: number) => ({
    seed: SEED,
    numRuns,
    interruptAfterTimeLimit: SECONDS * 1000,
    markInterruptAsFailure: false,
    endOnFailure: true,
    includeErrorInReport: true,
  });

  before(async () => {
    process.on("unhandledRejection", onUnhandled);
    server = await startServer({ environments, port: 0, tokens: [TOKEN], maxSessions: 256, headMilliseconds: 5000, idleSeconds: 120 });
    base = server.url;
    const catalog = (await ask("GET", "/envs")).json as { environments: { id: string; tools: ToolSpec[] }[] };
    tools = Object.fromEntries(catalog.environments.map((entry) => [entry.id, entry.tools]));
    // Warm-up: each environment's first session (a task file read, code compiled) before the loop is watched.
    for (const id of ENV_IDS) {
      const opened = await ask("POST", "/sessions", JSON.stringify({ env: id, config: environments[id]?.trainingConfig ?? {} }));
      const sessionId = (opened.json as { session_id?: string }).session_id;
      if (sessionId) await ask("DELETE", `/sessions/${sessionId}`);
    }
    collectGarbage();
    collectGarbage();
    heapBefore = process.memoryUsage().heapUsed;
    delay.enable();
    await resetDelay();
  });

  after(async () => {
    delay.disable();
    process.removeListener("unhandledRejection", onUnhandled);
    await server.close();
  });

  it("answers every route's fuzzed body with JSON and never a 5xx", async () => {
    const target = fc.oneof(
      fc.constantFrom("/sessions", "/envs", "/stats", "/health", "/ws", "/", "/sessions/", "/envs/mock"),
      fc.constantFrom(...ENV_IDS).map((id) => `/envs/${encodeURIComponent(id)}`),
      fc
        .tuple(fc.constantFrom("", "/call", "/reward", "/reward?ended_by=finished", "/reward?ended_by=x"), hostileString)
        .map(([tail, id]) => `/sessions/${encodeURIComponent(id.slice(0, 200))}${tail}`),
    );
    const body = fc.oneof(
      { weight: 4, arbitrary: sessionBody.map((value) => JSON.stringify(value)) },
      { weight: 2, arbitrary: hostileJson.map((value) => JSON.stringify(value)) },
      { weight: 1, arbitrary: hostileString },
    );
    const headers = fc.constantFrom<Record<string, string>>(AUTH, AUTH, AUTH, {}, { authorization: "Bearer wrong" });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("GET", "POST", "DELETE", "PUT", "PATCH"), target, body, headers, async (method, path, text, sent) => {
        count("routes");
        await withinLoopBudget(`${method} ${path}`, async () => {
          await ask(method, path, method === "GET" ? undefined : text, sent);
        });
      }),
      budget(400),
    );
  });

  it("answers every registered environment's tools on fuzzed arguments", async () => {
    // Every tool of every environment, and an unknown tool name, on one session per environment (opened
    // again once its episode ends); the reward at the end.
    const pairs = ENV_IDS.flatMap((id) => [...(tools[id] ?? []), undefined].map((tool) => ({ id, tool })));
    const sessions: Record<string, string | undefined> = {};
    const sessionOf = async (id: string, seed: number): Promise<string | undefined> => {
      if (sessions[id]) return sessions[id];
      const opened = await ask("POST", "/sessions", JSON.stringify({ env: id, seed, config: environments[id]?.trainingConfig ?? {} }));
      return (sessions[id] = (opened.json as { session_id?: string }).session_id);
    };
    // Rounds over every (environment, tool) pair, the first round whole (one case each) and later ones until the time is up.
    const deadline = Date.now() + SECONDS * 1000;
    for (let round = 0; round === 0 || Date.now() < deadline; round++) {
      for (const { id, tool } of pairs) {
        if (round > 0 && Date.now() >= deadline) break;
        const call = fc.record({ name: tool ? fc.constant(tool.function.name) : hostileString, arguments: argumentsFor(tool) });
        await fc.assert(
          fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 3 }), fc.nat(20), async (calls, seed) => {
            count("tools");
            await withinLoopBudget(`${id} ${tool?.function.name ?? "(unknown tool)"} (round ${round})`, async () => {
              const session = await sessionOf(id, seed);
              if (!session) return;
              for (const one of calls) {
                const reply = await ask("POST", `/sessions/${session}/call`, JSON.stringify(one));
                if ((reply.json as { done?: unknown }).done !== true) continue;
                await ask("GET", `/sessions/${session}/reward`);
                await ask("DELETE", `/sessions/${session}`);
                created.delete(session);
                sessions[id] = undefined;
                break;
              }
            });
          }),
          { seed: SEED + round, numRuns: round === 0 ? 1 : 2, endOnFailure: true, includeErrorInReport: true },
        );
      }
    }
    for (const [id, session] of Object.entries(sessions)) {
      if (!session) continue;
      await ask("POST", `/sessions/${session}/reward`, "{}");
      await ask("DELETE", `/sessions/${session}`);
      created.delete(session);
      sessions[id] = undefined;
    }
  });

  it("answers every fuzzed WebSocket and MCP frame with one frame, and keeps the connection", async () => {
    const frameFor = (id: string): fc.Arbitrary<unknown> => {
      const offered = tools[id] ?? [];
      const toolArbitrary = fc.oneof(fc.constantFrom(...(offered.length > 0 ? offered : [undefined])), fc.constant(undefined));
      const step = toolArbitrary.chain((spec) =>
        fc.record({
          type: fc.oneof(fc.constantFrom("call_tool", "list_tools"), hostileString),
          tool_name: spec ? fc.constant(spec.function.name) : hostileString,
          arguments: argumentsFor(spec),
        }),
      );
      const mcp = toolArbitrary.chain((spec) =>
        fc.record({
          jsonrpc: fc.oneof(fc.constant("2.0"), hostileJson),
          id: fc.oneof(fc.nat(), hostileString, fc.constant(null)),
          method: fc.oneof(fc.constantFrom("tools/list", "tools/call"), hostileString),
          params: fc.oneof(fc.record({ name: spec ? fc.constant(spec.function.name) : hostileString, arguments: argumentsFor(spec) }), hostileJson),
        }),
      );
      return fc.oneof(
        {
          weight: 3,
          arbitrary: fc.record({ type: fc.constant("step"), data: fc.oneof({ weight: 4, arbitrary: step }, { weight: 1, arbitrary: hostileJson }) }),
        },
        { weight: 2, arbitrary: fc.record({ type: fc.constant("mcp"), data: mcp }) },
        { weight: 1, arbitrary: fc.record({ type: fc.constant("reset"), data: sessionBody }) },
        { weight: 1, arbitrary: fc.record({ type: fc.oneof(fc.constantFrom("state", "close"), hostileString), data: hostileJson }) },
        { weight: 1, arbitrary: hostileJson },
        { weight: 1, arbitrary: hostileString.map((text) => ({ raw: text })) },
      );
    };
    const conversation = fc
      .constantFrom(...ENV_IDS)
      .chain((id) => fc.record({ id: fc.constant(id), seed: fc.nat(20), frames: fc.array(frameFor(id), { minLength: 1, maxLength: 5 }) }));
    await fc.assert(
      fc.asyncProperty(conversation, async ({ id, seed, frames }) => {
        count("websocket");
        await withinLoopBudget(`/ws ${id}`, async () => {
          const socket = new WebSocket(`${base.replace("http", "ws")}/ws`, { headers: AUTH });
          const replies: unknown[] = [];
          socket.on("message", (data) => replies.push(JSON.parse(String(data))));
          await new Promise<void>((resolve, reject) => {
            socket.once("open", () => resolve());
            socket.once("error", reject);
          });
          const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
          const reset = { type: "reset", data: { env: id, seed, config: environments[id]?.trainingConfig ?? {} } };
          let expected = 0;
          try {
            for (const frame of [reset, ...frames]) {
              const fields = typeof frame === "object" && frame !== null ? (frame as { raw?: unknown; type?: unknown }) : {};
              socket.send(typeof fields.raw === "string" ? fields.raw : JSON.stringify(frame));
              if (fields.type === "close") break;
              expected++;
            }
            const deadline = Date.now() + 15_000;
            while (replies.length < expected && socket.readyState === WebSocket.OPEN && Date.now() < deadline) await sleep(2);
            assert.equal(replies.length, expected, `${replies.length} replies to ${expected} frames: ${JSON.stringify(frames).slice(0, 300)}`);
            for (const reply of replies)
              assert.ok(["observation", "state", "error", "mcp"].includes((reply as { type: string }).type), JSON.stringify(reply).slice(0, 200));
          } finally {
            socket.close();
            await closed;
          }
        });
      }),
      budget(200),
    );
  });

  it("crashed nothing, left no rejection unhandled, and gave the memory back", async () => {
    console.error(`server fuzz seed ${SEED}: cases ${JSON.stringify(cases)}`);
    assert.deepEqual(unhandled, [], "every promise is awaited or caught");
    for (const id of created) await fetch(`${base}/sessions/${id}`, { method: "DELETE", headers: AUTH });
    await sleep(100);
    assert.equal(server.store.size, 0, "every session the suite opened is closed");
    collectGarbage();
    collectGarbage();
    const grown = process.memoryUsage().heapUsed - heapBefore;
    assert.ok(grown < 64 * 1024 * 1024, `the heap grew by ${Math.round(grown / 1024 / 1024)} MiB over the fuzzing`);
  });
});
