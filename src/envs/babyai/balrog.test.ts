import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Message } from "../../core/index.ts";
import { NAIVE_INSTRUCTION, balrogPrompt, filterLetters, instructionPrompt, invalidActionNotice, parseReply } from "./balrog.ts";

describe("BALROG babyai text harness", () => {
  it("builds the instruction prompt exactly", () => {
    const prompt = instructionPrompt("go to the red ball");
    assert.ok(
      prompt.startsWith("You are an agent playing a simple navigation game. Your goal is to go to the red ball. The following are the possible actions"),
    );
    assert.ok(
      prompt.includes(
        "\n\nturn left: turn to the left,\nturn right: turn to the right,\ngo forward: take one step forward,\npick up: pick up the object below you,\ndrop: drop the object that you are holding,\ntoggle: manipulate the object in front of you.\n\nIn a moment I will present you an observation.\n\nTips:\n",
      ),
    );
    assert.ok(prompt.endsWith("- It doesn't make sense to repeat the same action over and over if the observation doesn't change.\n\nPLAY!"));
  });

  it("filters completions like the naive agent and checks exact membership", () => {
    assert.equal(filterLetters("go forward."), "go forward");
    assert.equal(filterLetters("pick_up 1!"), "pickup ");
    assert.deepEqual(parseReply("go forward."), { candidate: "go forward", action: 2, actionName: "go forward", valid: true });
    assert.equal(parseReply("toggle").action, 5);
    for (const invalid of ["Go forward", "go forward\n", " turn left", "ACTION: drop", ""]) {
      const parsed = parseReply(invalid);
      assert.equal(parsed.valid, false, invalid);
      assert.equal(parsed.actionName, "go forward");
    }
    assert.equal(
      invalidActionNotice("go forward"),
      "\n\nYour previous output did not contain a valid action. Defaulted to action: go forward\n\nObservation:\n",
    );
  });

  it("rebuilds BALROG's prompt: user instruction, labelled observations, raw actions, suffix on the last message", () => {
    const log: Message[] = [
      { role: "user", content: "INSTR" },
      { role: "user", content: "obs0" },
      { role: "assistant", content: "turn left!" },
      { role: "user", content: "obs1" },
    ];
    assert.deepEqual(balrogPrompt(log.slice(0, 2), 16), [
      { role: "user", content: "INSTR" },
      { role: "user", content: `Current Observation:\nobs0\n\n${NAIVE_INSTRUCTION}` },
    ]);
    assert.deepEqual(balrogPrompt(log, 16), [
      { role: "user", content: "INSTR" },
      { role: "user", content: "Observation:\nobs0" },
      { role: "assistant", content: "turn left" },
      { role: "user", content: `Current Observation:\nobs1\n\n${NAIVE_INSTRUCTION}` },
    ]);
    assert.equal(log[3]?.content, "obs1", "the log itself is not modified");
  });

  it("keeps the last 2·max_text_history events, so long episodes start with an assistant turn", () => {
    const log: Message[] = [
      { role: "user", content: "INSTR" },
      { role: "user", content: "obs0" },
    ];
    for (let step = 1; step <= 20; step++) log.push({ role: "assistant", content: "go forward" }, { role: "user", content: `obs${step}` });
    const prompt = balrogPrompt(log, 16);
    assert.equal(prompt.length, 33);
    assert.deepEqual(prompt[1], { role: "assistant", content: "go forward" });
    assert.equal(prompt[2]?.content, "Observation:\nobs5");
    assert.equal(prompt[32]?.content, `Current Observation:\nobs20\n\n${NAIVE_INSTRUCTION}`);
  });

  it("does not record an empty filtered completion as an action (BALROG's `if prev_action`)", () => {
    const prompt = balrogPrompt(
      [
        { role: "user", content: "I" },
        { role: "user", content: "o0" },
        { role: "assistant", content: "123" },
        { role: "user", content: "o1" },
      ],
      16,
    );
    assert.deepEqual(
      prompt.map((message) => message.role),
      ["user", "user", "user"],
    );
  });
});
