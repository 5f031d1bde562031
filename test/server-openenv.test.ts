import assert from "node:assert/strict";
import { describe, it } from "node:test";
import WebSocket from "ws";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { OpenEnvConnection } from "../src/server/openenv-protocol.ts";
import { createProtocol, type Protocol } from "../src/server/protocol.ts";
import { startServer } from "../src/server/start-server.ts";
import { ask } from "../src/testing/protocol-client.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Arguments nested `levels` deep: `{"a":{"a":…{}}}`. */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;
}

/**
 * Tool calls, each as the JSON text of its `name` and `arguments` (so that `__proto__` stays an own key):
 * valid, unknown, prototype-named and malformed, and nested past the core's depth limit.
 */
const calls: Array<{ what: string; env: string; name: string; args: string | undefined }> = [
  { what: "a valid lookup", env: "mock", name: '"lookup"', args: '{"key":"kalo"}' },
  { what: "an unknown tool", env: "mock", name: '"dance"', args: "{}" },
  { what: "arguments left out", env: "mock", name: '"lookup"', args: undefined },
  { what: "a name that is no string", env: "mock", name: "7", args: "{}" },
  { what: "an empty name", env: "mock", name: '""', args: "{}" },
  { what: "arguments as an array", env: "mock", name: '"lookup"', args: "[1]" },
  { what: "arguments as text", env: "mock", name: '"lookup"', args: '"{}"' },
  ...["constructor", "__proto__", "toString", "hasOwnProperty"].map((key) => ({
    what: `the prototype-named argument ${key}`,
    env: "search_plan_act",
    name: '"search"',
    args: `{"query":"x","${key}":1}`,
  })),
  { what: "arguments nested 70 deep", env: "mock", name: '"lookup"', args: nested(70) },
];

/** The HTTP call's body, an OpenEnv step frame and an MCP tools/call frame for one call. */
function texts(name: string, args: string | undefined): { http: string; step: string; mcp: string } {
  const argument = (key: string) => (args === undefined ? "" : `,"${key}":${args}`);
  return {
    http: `{"name":${name}${argument("arguments")}}`,
    step: `{"type":"step","data":{"type":"call_tool","tool_name":${name}${argument("arguments")}}}`,
    mcp: `{"type":"mcp","data":{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":${name}${argument("arguments")}}}}`,
  };
}

const ERROR_TYPES: Record<string, string> = { unknown_tool: "tool_not_found", invalid_arguments: "invalid_args" };

describe("OpenEnv tool calls take the core's call path", () => {
  it("answers each call over step and MCP as POST /sessions/:id/call answers it", async () => {
    const protocol = createProtocol({ environments: ENVIRONMENTS });
    const routed: unknown[] = [];
    // Every OpenEnv tool call must reach the core's callTool (and through it the route's checks).
    const spied: Protocol = { ...protocol, callTool: (id, fields) => (routed.push(fields), protocol.callTool(id, fields)) };
    for (const call of calls) {
      const { http, step, mcp } = texts(call.name, call.args);
      const created = await ask(protocol, "POST", "/sessions", { env: call.env });
      const expected = await ask(protocol, "POST", `/sessions/${created.json.session_id as string}/call`, http);
      for (const [kind, frame] of [
        ["step", step],
        ["mcp", mcp],
      ] as const) {
        const connection = new OpenEnvConnection({ protocol: spied, defaultEnv: call.env });
        await connection.handle('{"type":"reset"}');
        const before = routed.length;
        const reply = (await connection.handle(frame)).frames[0] as Json;
        const what = `${call.what} over ${kind}`;
        const deep = call.what.includes("nested");
        // A frame over the depth limit is refused before any call, as the HTTP body is; every other one takes the core's call.
        assert.equal(routed.length - before, deep ? 0 : 1, `${what}: calls through the core`);
        if (expected.status === 200) {
          const outcome = expected.json;
          if (kind === "step") {
            assert.equal(reply.type, "observation", what);
            assert.equal(reply.data.observation.result, outcome.content, what);
            assert.equal(reply.data.done, outcome.done, what);
            const error = outcome.is_error ? { error_type: ERROR_TYPES[outcome.error_kind] ?? "execution_error", message: outcome.content } : null;
            assert.deepEqual(reply.data.observation.error, error, what);
          } else {
            assert.deepEqual(reply.data.result.content, [{ type: "text", text: outcome.content }], what);
            assert.equal(reply.data.result.isError, outcome.is_error, what);
          }
        } else {
          assert.equal(expected.status, 400, `${call.what}: ${expected.text}`);
          const message = expected.json.error.message as string;
          if (kind === "step" || deep) assert.deepEqual(reply, { type: "error", data: { message, code: "VALIDATION_ERROR" } }, what);
          else assert.deepEqual(reply.data.error, { code: -32602, message }, what);
        }
        connection.dispose();
      }
    }
    // The prototype-named arguments are tool errors, never a server error or a crash.
    const prototyped = await ask(protocol, "POST", "/sessions", { env: "search_plan_act" });
    const reply = await ask(protocol, "POST", `/sessions/${prototyped.json.session_id as string}/call`, texts('"search"', '{"query":"x","__proto__":1}').http);
    assert.equal(reply.json.error_kind, "invalid_arguments", reply.text);
    assert.match(reply.json.content, /unexpected argument '__proto__'/);
  });

  it("refuses a frame that is not JSON, or not an object, with the HTTP body's messages", async () => {
    const protocol = createProtocol({ environments: ENVIRONMENTS });
    const connection = new OpenEnvConnection({ protocol, defaultEnv: "mock" });
    for (const [text, code] of [
      ["{bad", "INVALID_JSON"],
      ["[1]", "VALIDATION_ERROR"],
      [`{"type":"reset","data":{"seed":${"[".repeat(300)}${"]".repeat(300)}}}`, "VALIDATION_ERROR"],
    ] as const) {
      const http = await ask(protocol, "POST", "/sessions", text);
      assert.equal(http.status, 400);
      const frame = (await connection.handle(text)).frames[0] as Json;
      assert.deepEqual(frame, { type: "error", data: { message: http.json.error.message, code } }, text.slice(0, 40));
    }
  });
});

describe("one session per OpenEnv connection", () => {
  it("closes a session whose reset was still opening when the connection ended", async () => {
    const protocol = createProtocol({ environments: ENVIRONMENTS });
    const connection = new OpenEnvConnection({ protocol, defaultEnv: "tau2_mock" });
    // tau2's session opens once the simulated customer's first message has come: asynchronously.
    const pending = connection.handle('{"type":"reset","data":{"config":{"customer":"tool"}}}');
    connection.dispose();
    const reply = (await pending).frames[0] as Json;
    assert.equal(reply.type, "error");
    assert.equal(reply.data.code, "SESSION_ERROR");
    assert.equal(protocol.store.size, 0, "the session opened after the connection ended was closed");
    // A connection still open keeps the session its reset opened.
    const open = new OpenEnvConnection({ protocol, defaultEnv: "tau2_mock" });
    assert.equal(((await open.handle('{"type":"reset","data":{"config":{"customer":"tool"}}}')).frames[0] as Json).type, "observation");
    assert.equal(protocol.store.size, 1);
    open.dispose();
    assert.equal(protocol.store.size, 0);
  });
});

describe("OpenEnv frames over a real socket", () => {
  it("holds a frame to the HTTP body limit: under it answered, over it the connection closes (1009) where HTTP answers 413", async () => {
    const server = await startServer({ environments: { mock: mockEnvironment }, port: 0, maxBodyBytes: 4096 });
    let socket: WebSocket | undefined;
    try {
      const created = await fetch(`${server.url}/sessions`, { method: "POST", body: '{"env":"mock"}' });
      const id = ((await created.json()) as Json).session_id as string;
      const call = (bytes: number) => '{"name":"lookup","arguments":{"key":"kalo"}}'.padEnd(bytes, " ");
      assert.equal((await fetch(`${server.url}/sessions/${id}/call`, { method: "POST", body: call(4096) })).status, 200);
      const refused = await fetch(`${server.url}/sessions/${id}/call`, { method: "POST", body: call(4097) });
      assert.equal(refused.status, 413);
      assert.equal(((await refused.json()) as Json).error.code, "BODY_TOO_LARGE");
      socket = new WebSocket(`${server.url.replace("http", "ws")}/ws`);
      const ws = socket;
      await new Promise((resolve) => ws.once("open", resolve));
      const next = () => new Promise<Json>((resolve) => ws.once("message", (data) => resolve(JSON.parse(String(data)) as Json)));
      let reply = next();
      ws.send('{"type":"reset"}');
      assert.equal((await reply).type, "observation");
      const frame = (bytes: number) => '{"type":"step","data":{"type":"call_tool","tool_name":"lookup","arguments":{"key":"kalo"}}}'.padEnd(bytes, " ");
      reply = next();
      ws.send(frame(4096));
      assert.equal((await reply).data.observation.tool_name, "lookup");
      const closed = new Promise<number>((resolve) => ws.once("close", resolve));
      ws.send(frame(4097));
      assert.equal(await closed, 1009);
    } finally {
      socket?.terminate();
      await server.close();
    }
  });
});
