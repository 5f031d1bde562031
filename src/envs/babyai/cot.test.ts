import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseConfig, type Message } from "../../core/index.ts";
import { COT_INSTRUCTION, DEFAULT_ACTION, balrogPrompt, filterLetters, instructionPrompt, invalidActionNotice, parseReply, pythonStrip } from "./balrog.ts";
import { babyaiEnvironment } from "./index.ts";

/** BALROG's own results for its chain-of-thought agent (test/fixtures/balrog/README.md). */
interface CotCase {
  id: string;
  note: string;
  reply: string;
  parsed_string: string;
  valid: boolean;
  executed_action: string;
  failed_candidate: string | null;
  feedback_prefix_next_obs: string | null;
  history_action: string;
}
interface DemoStep {
  reply: string;
  messages_sent: Message[];
  parsed_string: string;
  executed_action: string;
}
const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "../../../test/fixtures/balrog/cot_parse_cases.json"), "utf8")) as {
  cot_suffix: { text: string; joined_as: string };
  invalid_action_feedback: { prefix: string };
  parse_rule: { babyai_action_space: string[]; default_action: string };
  prompt_demo: { instruction_prompt: string; steps: DemoStep[] };
  cases: CotCase[];
};

function startEpisode(config: Record<string, unknown>, index = 0) {
  const parsed = parseConfig("babyai", babyaiEnvironment.configSchema, JSON.stringify(config));
  return babyaiEnvironment.start(babyaiEnvironment.generate({ split: "eval", seed: 7, index, config: parsed }));
}

describe("BALROG chain-of-thought agent (babyai text protocol)", () => {
  it("uses BALROG's exact suffix, feedback text and default action", () => {
    assert.equal(COT_INSTRUCTION, fixture.cot_suffix.text);
    assert.equal(fixture.cot_suffix.joined_as, '"\\n\\n" + text');
    assert.equal(invalidActionNotice(DEFAULT_ACTION), fixture.invalid_action_feedback.prefix.replace("{action}", "go forward"));
    assert.equal(DEFAULT_ACTION, fixture.parse_rule.default_action);
  });

  it(`parses all ${fixture.cases.length} reference replies exactly as BALROG does`, () => {
    assert.equal(fixture.cases.length, 40);
    for (const example of fixture.cases) {
      const parsed = parseReply(example.reply, "cot");
      const label = `${example.id} ${example.note}`;
      assert.equal(parsed.candidate, example.parsed_string, label);
      assert.equal(parsed.valid, example.valid, label);
      assert.equal(parsed.actionName, example.executed_action, label);
      assert.equal(parsed.action, fixture.parse_rule.babyai_action_space.indexOf(example.executed_action), label);
      assert.equal(parsed.valid ? null : parsed.candidate, example.failed_candidate, label);
      assert.equal(parsed.valid ? null : invalidActionNotice(parsed.actionName), example.feedback_prefix_next_obs, label);
    }
  });

  it("follows Python's whitespace, not JavaScript's (U+FEFF removed, U+0085 and U+001C stripped)", () => {
    assert.equal(filterLetters("pick\ufeff up"), "pick up");
    assert.equal(pythonStrip("\u0085\u001c go forward \u3000"), "go forward");
    assert.equal(pythonStrip("\ufeffdrop\u200b"), "\ufeffdrop\u200b", "U+FEFF and U+200B are not Python whitespace");
    assert.equal(parseReply("ACTION: drop\u001f", "cot").valid, true);
    assert.equal(parseReply("ACTION: drop\u200b", "cot").candidate, "drop", "U+200B is filtered out, not stripped");
  });

  it("runs every reference reply through an episode: executed action, notice, failed candidate and history", () => {
    for (const example of fixture.cases) {
      const episode = startEpisode({ task: "goto", balrog_agent: "cot" });
      const first = episode.reply!(example.reply) as { content: string; isError: boolean };
      assert.equal(first.isError, !example.valid, example.id);
      if (example.feedback_prefix_next_obs === null) assert.ok(!first.content.includes("did not contain a valid action"), example.id);
      else assert.ok(first.content.startsWith(example.feedback_prefix_next_obs), example.id);
      const diagnostics = episode.diagnostics!();
      assert.deepEqual(diagnostics.failed_candidates, example.failed_candidate === null ? [] : [example.failed_candidate], example.id);
      assert.equal(diagnostics.balrog_agent, "cot");
      if (episode.done) continue;
      // One more step pushes the case's action out of "Previous plan" and into the plain history.
      const log: Message[] = [...episode.messages, { role: "assistant", content: example.reply }, { role: "user", content: first.content }];
      const second = episode.reply!("Next. ACTION: turn left") as { content: string };
      log.push({ role: "assistant", content: "Next. ACTION: turn left" }, { role: "user", content: second.content });
      const assistants = balrogPrompt(log, 16, "cot").filter((message) => message.role === "assistant");
      const expected = example.history_action === "" ? [] : [example.history_action];
      assert.deepEqual(
        assistants.map((message) => message.content),
        [...expected, "Previous plan:\nNext. ACTION: turn left"],
        example.id,
      );
    }
  });

  it("reproduces BALROG's 4-step prompt demo message for message", () => {
    const demo = fixture.prompt_demo;
    assert.equal(instructionPrompt("go to the red ball"), demo.instruction_prompt);
    // The log toolgym keeps: instruction, then each raw observation (notice included) and each raw reply.
    const observation = (step: DemoStep) => {
      const last = step.messages_sent.at(-1)!.content as string;
      assert.ok(last.startsWith("Current Observation:\n") && last.endsWith(`\n\n${fixture.cot_suffix.text}`));
      return last.slice("Current Observation:\n".length, last.length - fixture.cot_suffix.text.length - 2);
    };
    const log: Message[] = [{ role: "user", content: demo.instruction_prompt }];
    demo.steps.forEach((step, position) => {
      log.push({ role: "user", content: observation(step) });
      assert.deepEqual(balrogPrompt(log, 16, "cot"), step.messages_sent, `step ${position + 1}`);
      const parsed = parseReply(step.reply, "cot");
      assert.equal(parsed.candidate, step.parsed_string);
      assert.equal(parsed.actionName, step.executed_action);
      log.push({ role: "assistant", content: step.reply });
    });
  });

  it("keeps the naive agent as the default and rejects the CoT agent on the tools protocol", () => {
    const naive = startEpisode({ task: "goto" });
    assert.match(naive.view!(naive.messages).at(-1)!.content as string, /You always have to output one of the above actions/);
    assert.equal(naive.diagnostics!().balrog_agent, "naive");
    const cot = startEpisode({ task: "goto", balrog_agent: "cot" });
    assert.ok((cot.view!(cot.messages).at(-1)!.content as string).endsWith(`\n\n${fixture.cot_suffix.text}`));
    assert.throws(() => startEpisode({ protocol: "tools", balrog_agent: "cot" }), /balrog_agent "cot" applies to the text protocol only/);
  });
});
