// What every episode of an environment with a fixed dataset shows the model before its task (system
// prompts, tool schemas and their examples) must not give away a dev/test record's answer or supporting
// title (issue 31: the MuSiQue/2Wiki schemas once gave the shipped record 2hop__574419_270105's answer
// 'Stanley' as the example answer). Checked over every shipped record of every such environment.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { listEnvironments } from "../src/envs/registry.ts";

/** Answers that name a kind of answer rather than a fact (2Wiki's comparison questions). */
const GENERIC_ANSWERS = new Set(["yes", "no"]);
/** Words too common to make a pair of title words a giveaway ("and the", "of the"). */
const STOPWORDS = new Set(["the", "and", "for", "with", "from", "that", "this", "are", "was", "not", "its", "into"]);

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Each gold answer whole, and each pair of neighbouring words of a supporting title (a title's words given as keywords leak it too). */
function secrets(solution: unknown): string[] {
  if (!solution || typeof solution !== "object") return [];
  const { answer, golds, supporting_titles: titles } = solution as { answer?: unknown; golds?: unknown; supporting_titles?: unknown };
  const found: string[] = [];
  for (const gold of [answer, ...(Array.isArray(golds) ? golds : [])])
    if (typeof gold === "string" && words(gold).length > 0 && !GENERIC_ANSWERS.has(gold.toLowerCase())) found.push(words(gold).join(" "));
  for (const title of Array.isArray(titles) ? titles : []) {
    const parts = words(String(title)).filter((word) => word.length >= 3 && !STOPWORDS.has(word));
    for (let index = 0; index + 1 < parts.length; index++) found.push(`${parts[index]} ${parts[index + 1]}`);
    if (parts.length === 1) found.push(parts[0] as string);
  }
  return found;
}

describe("no gold answer or supporting title in any schema, system prompt or example", () => {
  const fixed = listEnvironments().filter((env) => env.taskCount);
  it("covers the fixed-dataset environments", () => {
    for (const id of ["musique", "2wiki", "tau2_mock", "tau2_retail"])
      assert.ok(
        fixed.some((env) => env.id === id),
        id,
      );
  });
  for (const env of fixed) {
    it(env.id, () => {
      const config = env.configSchema.parse({});
      let checked = 0;
      for (const split of env.splits) {
        const count = env.taskCount?.({ split, config: config as never }) ?? 0;
        const hidden = new Set<string>();
        const tasks = Array.from({ length: count }, (_, index) => env.generate({ split, seed: 0, index, config }));
        for (const task of tasks) for (const secret of secrets(env.solution(task))) hidden.add(secret);
        checked += tasks.length;
        // Nothing to hide (tau2's solutions are actions, not answers): no prompt can leak it.
        if (hidden.size === 0) continue;
        const shown = new Set<string>();
        for (const task of tasks) {
          const episode = env.start(task);
          // The task's own question and paragraphs are its user turn; everything else is the same for every task.
          const common = episode.messages.filter((message) => message.role === "system").map((message) => String(message.content ?? ""));
          shown.add(` ${[...common, JSON.stringify(episode.tools)].map((text) => words(text).join(" ")).join(" | ")} `);
        }
        for (const text of shown)
          for (const secret of hidden)
            assert.ok(!text.includes(` ${secret} `), `${env.id} (${split}): '${secret}' of a record is in a system prompt or tool schema`);
      }
      assert.ok(checked > 0, `${env.id}: every shipped record was checked`);
    });
  }
});
