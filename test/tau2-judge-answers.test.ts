import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { parseJudgeAnswer } from "../src/envs/tau2/judge.ts";
import { PythonError } from "../src/python-semantics/index.ts";

/** Judge answers as tau2's own evaluator read them (fixtures/tau2/judge-answers, made by tau2's Python). */
interface Answer {
  name: string;
  answer: string;
  checks: { nl_assertion: string; met: boolean; justification: string }[] | null;
  reward: number | null;
  raises: string | null;
}
const answers = (JSON.parse(readFileSync(new URL("./fixtures/tau2/judge-answers/answers.json", import.meta.url), "utf8")) as { answers: Answer[] }).answers;

describe("tau2 NL judge answers, read as tau2 reads them", () => {
  for (const item of answers) {
    it(`${item.name}: ${item.raises ? `raises ${item.raises}` : `reward ${item.reward}`}`, () => {
      if (item.raises) {
        assert.throws(
          () => parseJudgeAnswer(item.answer),
          (error: unknown) => error instanceof PythonError && error.pythonType === item.raises,
        );
        return;
      }
      const checks = parseJudgeAnswer(item.answer);
      assert.deepEqual(checks, item.checks);
      assert.equal(checks.every((check) => check.met) ? 1 : 0, item.reward);
    });
  }
});
