import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";
import { startHeldModel, type HeldModel } from "./support/held-model.ts";
import { createSessionRequest as create } from "./support/server-requests.ts";

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
});
