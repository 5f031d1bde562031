import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EpisodeDriver } from "../../rollout/episode-driver.ts";
import { babyaiEnvironment } from "./index.ts";

const NOTICE = "\n\nYour previous output did not contain a valid action. Defaulted to action: go forward\n\nObservation:\n";

function episodes(config: Record<string, unknown> = {}) {
  const parsed = babyaiEnvironment.configSchema.parse({ protocol: "tools", ...config });
  const task = babyaiEnvironment.generate({ split: "eval", seed: 3, index: 1, config: parsed });
  // Two episodes of the same task: one gets the bad call through the episode driver (which checks every call),
  // the other the action BALROG defaults to.
  const tried = new EpisodeDriver({ env: babyaiEnvironment, split: "eval", seed: 3, index: 1, config: parsed, task });
  return { tried, reference: babyaiEnvironment.start(task) };
}

describe("babyai act tool (tools protocol)", () => {
  it("publishes the act schema the model has always seen", () => {
    const { reference } = episodes();
    assert.deepEqual(reference.tools, [
      {
        type: "function",
        function: {
          name: "act",
          description: "Take one action in the game. Returns the next observation: what you carry, the walls and the objects you see, with their distances.",
          parameters: {
            type: "object",
            properties: {
              action: { type: "string", enum: ["turn left", "turn right", "go forward", "pick up", "drop", "toggle"], description: "The action to take." },
            },
            required: ["action"],
            additionalProperties: false,
          },
        },
      },
    ]);
  });

  it("a valid action steps the level once, as the same action given as text does", async () => {
    const { tried } = episodes();
    const config = babyaiEnvironment.configSchema.parse({ protocol: "text" });
    const text = babyaiEnvironment.start(babyaiEnvironment.generate({ split: "eval", seed: 3, index: 1, config }));
    for (const action of ["turn left", "go forward", "toggle"]) {
      const result = tried.call({ name: "act", arguments: { action } });
      assert.equal(result.isError, false);
      assert.equal(result.content, (await text.reply?.(action))?.content, action);
    }
    assert.equal(tried.episode.diagnostics?.().steps, 3);
    assert.equal(tried.episode.diagnostics?.().invalid_actions, 0);
    assert.equal(tried.formatErrors.length, 0);
  });

  const refused: Array<[string, string, unknown, string, string]> = [
    ["an unknown action", "act", { action: "jump" }, "invalid_arguments", "jump"],
    ["a missing action", "act", {}, "invalid_arguments", "null"],
    ["a non-string action", "act", { action: 2 }, "invalid_arguments", "2"],
    ["an undeclared extra argument", "act", { action: "turn left", why: "wall ahead" }, "invalid_arguments", '{"action":"turn left","why":"wall ahead"}'],
    ["an unknown tool", "move", { action: "turn left" }, "unknown_tool", "move"],
  ];
  for (const [what, name, args, errorKind, candidate] of refused) {
    it(`${what} still takes a step: go forward, with BALROG's notice`, () => {
      const { tried, reference } = episodes();
      const result = tried.call({ name, arguments: args });
      const expected = reference.call("act", { action: "go forward" });
      assert.equal(result.isError, true);
      assert.equal(result.errorKind, errorKind);
      assert.equal(result.content, NOTICE + expected.content);
      assert.deepEqual(
        tried.formatErrors.map((error) => error.kind),
        [errorKind],
        "counted once, by the driver",
      );
      const diagnostics = tried.episode.diagnostics?.() as Record<string, unknown>;
      assert.equal(diagnostics.steps, 1);
      assert.equal(diagnostics.invalid_actions, 1);
      assert.deepEqual(diagnostics.failed_candidates, [candidate]);
    });
  }

  it("without feedback the refused call returns the bare observation", () => {
    const { tried, reference } = episodes({ feedback_on_invalid_action: false });
    assert.equal(tried.call({ name: "act", arguments: { action: "jump" } }).content, reference.call("act", { action: "go forward" }).content);
  });

  it("the text protocol refuses tool calls without stepping", () => {
    const config = babyaiEnvironment.configSchema.parse({ protocol: "text" });
    const task = babyaiEnvironment.generate({ split: "eval", seed: 3, index: 1, config });
    const driver = new EpisodeDriver({ env: babyaiEnvironment, split: "eval", seed: 3, index: 1, config, task });
    const result = driver.call({ name: "act", arguments: { action: "turn left" } });
    assert.equal(result.errorKind, "unknown_tool");
    assert.match(result.content, /uses the text protocol: reply with an action as plain text/);
    assert.equal(driver.episode.diagnostics?.().steps, 0);
    assert.equal(driver.formatErrors.length, 1);
  });
});
