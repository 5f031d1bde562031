import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { main } from "../src/cli/main.ts";
import { memoryStream } from "../src/cli/io.ts";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";
import { startHeldModel, type HeldModel } from "./support/held-model.ts";
import { runCli } from "./support/run-cli.ts";
import { createSessionRequest as create, nextFrame, openSocket, send } from "./support/server-requests.ts";

/**
 * What a client may make `toolgym serve` send to the operator's models (issue 36 finding 6): token caps
 * bounded, chat-template switches whitelisted, and the models' addresses never shown to a client.
 */
describe("toolgym serve bounds what a client passes to the operator's model (issue 36)", () => {
  let server: RunningServer;
  let model: HeldModel;
  let refusing: HeldModel;
  const customer = { customer: "tool", user_model: "user" };

  before(async () => {
    model = await startHeldModel();
    refusing = await startHeldModel(null);
    server = await startServer({
      environments: ENVIRONMENTS,
      port: 0,
      resources: { models: { user: `${model.url}#tiny`, gone: `${refusing.url}#tiny` }, maxModelTokens: 2048 },
    });
  });
  after(async () => {
    await server.close();
    await model.close();
    await refusing.close();
  });

  it("refuses user_max_tokens past the server's bound and any chat_template_kwargs beyond the switches", async () => {
    for (const config of [
      { ...customer, user_max_tokens: 1e9 },
      { ...customer, user_chat_template_kwargs: { chat_template: "{{ secrets }}" } },
      { ...customer, judge_chat_template_kwargs: { enable_thinking: "yes" } },
      { ...customer, user_chat_template_kwargs: { tokenize: true } },
    ]) {
      const reply = await create(server.port, { env: "tau2_mock", config });
      assert.equal(reply.status, 400, JSON.stringify(config));
      assert.equal(reply.json.error?.code, "MODEL_OPTION_REFUSED");
    }
    assert.equal(model.bodies.length, 0, "nothing reached the model");
    const accepted = await create(server.port, {
      env: "tau2_mock",
      config: { ...customer, user_max_tokens: 512, user_chat_template_kwargs: { enable_thinking: false } },
    });
    assert.equal(accepted.status, 201, accepted.text);
    assert.equal(model.bodies[0]?.max_tokens, 512);
    assert.deepEqual(model.bodies[0]?.chat_template_kwargs, { enable_thinking: false });
  });

  it("answers OPENING_FAILED without the model's host or port", async () => {
    const reply = await create(server.port, { env: "tau2_mock", config: { customer: "tool", user_model: "gone" } });
    assert.equal(reply.status, 502);
    assert.equal(reply.json.error?.code, "OPENING_FAILED");
    const port = new URL(refusing.url).port;
    assert.doesNotMatch(reply.text, new RegExp(`127\\.0\\.0\\.1|:${port}|http:`));
  });

  it("takes the operator's cap from --max-model-tokens (a bad value: exit 2, one coded line)", async () => {
    for (const value of ["0", "-5", "1.5", "lots", "99999999"]) {
      const result = await runCli(["serve", "--port", "0", "--max-model-tokens", value]);
      assert.equal(result.code, 2, `--max-model-tokens ${value}: ${result.stderr}`);
      const lines = result.stderr.split("\n").filter((line) => line !== "");
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0] as string, /^toolgym: --max-model-tokens must be an integer .*\[OPTION_INVALID\]$/);
      assert.equal(result.stdout, "", "nothing started");
    }
    // A real `toolgym serve --max-model-tokens 300`, stopped through the CLI's interrupt signal.
    const opener = await startHeldModel();
    const stop = new AbortController();
    const stdout = memoryStream();
    const running = main(["serve", "--port", "0", "--model", `user=${opener.url}#tiny`, "--max-model-tokens", "300"], {
      stdout,
      stderr: memoryStream(),
      interrupts: () => stop.signal,
    });
    try {
      let port = 0;
      while (port === 0) {
        const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout.text());
        if (listening) port = Number(listening[1]);
        else await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const over = await create(port, { env: "tau2_mock", config: { ...customer, user_max_tokens: 301 } });
      assert.equal(over.status, 400, over.text);
      assert.equal(over.json.error?.code, "MODEL_OPTION_REFUSED");
      assert.match(over.json.error?.message ?? "", /at most 300 on this server/);
      // 8192, the default cap, is past this operator's 300 too.
      const defaultCap = await create(port, { env: "tau2_mock", config: { ...customer, user_max_tokens: 8192 } });
      assert.equal(defaultCap.status, 400, defaultCap.text);
      const within = await create(port, { env: "tau2_mock", config: { ...customer, user_max_tokens: 300 } });
      assert.equal(within.status, 201, within.text);
      assert.equal(opener.bodies[0]?.max_tokens, 300);
    } finally {
      stop.abort();
      assert.equal(await running, 0);
      await opener.close();
    }
  });
});

/**
 * Work started for a session ends with it (issue 36 finding 6): a step waiting for the user model is aborted
 * when its session is deleted, expires, or its WebSocket closes. The fake model holds every request after the
 * opening and counts the requests whose connection the server closed (a real model cannot be made to hang).
 */
describe("toolgym serve aborts a closed session's user-model request (issue 36)", () => {
  const customer = { customer: "tool", user_model: "user" };
  const message = JSON.stringify({ name: "send_message_to_user", arguments: { content: "How can I help you today?" } });
  const until = async (condition: () => boolean): Promise<void> => {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  const serve = async (model: HeldModel, options: { idleSeconds?: number } = {}) =>
    startServer({ environments: ENVIRONMENTS, port: 0, maxSessions: 1, resources: { models: { user: `${model.url}#tiny` } }, ...options });

  it("DELETE: the request's connection is closed, the step answers 409 SESSION_CLOSED, the quota slot is free", { timeout: 30_000 }, async () => {
    const model = await startHeldModel();
    const server = await serve(model);
    try {
      const created = await create(server.port, { env: "tau2_mock", config: customer });
      assert.equal(created.status, 201, created.text);
      const id = created.json.session_id as string;
      const step = send(server.port, "POST", `/sessions/${id}/call`, { body: message, timeoutMilliseconds: 30_000 });
      await until(() => model.held === 1);
      assert.equal((await send(server.port, "DELETE", `/sessions/${id}`)).status, 200);
      await until(() => model.aborted === 1);
      const answer = await step;
      assert.equal(answer.status, 409, answer.text);
      assert.equal(answer.json.error?.code, "SESSION_CLOSED");
      assert.equal(model.aborted, model.held, "no request left in flight");
      // The server's one session slot is free again.
      assert.equal((await create(server.port, { env: "mock" })).status, 201);
    } finally {
      await server.close();
      await model.close();
    }
  });

  it("a WebSocket closing and a session expiring abort the request too", { timeout: 30_000 }, async () => {
    const model = await startHeldModel();
    const server = await serve(model, { idleSeconds: 1 });
    try {
      const { socket } = await openSocket(`${server.url.replace("http", "ws")}/ws`);
      socket.send(JSON.stringify({ type: "reset", data: { env: "tau2_mock", config: customer } }));
      assert.equal((await nextFrame(socket)).type, "observation");
      socket.send(JSON.stringify({ type: "step", data: { type: "call_tool", tool_name: "send_message_to_user", arguments: { content: "Hello?" } } }));
      await until(() => model.held === 1);
      socket.close();
      await until(() => model.aborted === 1);
      // Expiry: the held model answers only its first request, so this session opens on a second fake model.
      const second = await startHeldModel();
      const expiring = await serve(second, { idleSeconds: 1 });
      try {
        const created = await create(expiring.port, { env: "tau2_mock", config: customer });
        const step = send(expiring.port, "POST", `/sessions/${created.json.session_id as string}/call`, { body: message, timeoutMilliseconds: 30_000 });
        await until(() => second.held === 1);
        // Nothing is sent for a second: the reaper closes the idle session and its request.
        await until(() => second.aborted === 1);
        assert.equal((await step).json.error?.code, "SESSION_CLOSED");
      } finally {
        await expiring.close();
        await second.close();
      }
    } finally {
      await server.close();
      await model.close();
    }
  });
});
