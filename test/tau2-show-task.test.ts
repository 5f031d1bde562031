import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runCli } from "./support/run-cli.ts";

/** `toolgym show ENV --task ID`: a tau2 task by its id in tau2's files, not by its position in the split. */
const splits = JSON.parse(readFileSync(join(import.meta.dirname, "../assets/tau2/domains/retail/split_tasks.json"), "utf8")) as Record<string, string[]>;

describe("show --task", () => {
  it("finds a retail task by its tau2 id in the chosen split", async () => {
    for (const split of ["base", "test"]) {
      const id = splits[split]?.[7] as string;
      const result = await runCli(["show", "tau2_retail", "--split", split, "--task", id, "--json"]);
      assert.equal(result.code, 0, result.stderr);
      const shown = JSON.parse(result.stdout) as { index: number; task: { task_id: string } };
      assert.equal(shown.task.task_id, id);
      // The index is the task's place in the split as the environment orders it: --index reaches the same task.
      const byIndex = await runCli(["show", "tau2_retail", "--split", split, "--index", String(shown.index), "--json"]);
      assert.equal((JSON.parse(byIndex.stdout) as { task: { task_id: string } }).task.task_id, id);
    }
  });

  it("an unknown id, --task with --index, and an environment without task ids are usage errors", async () => {
    const unknown = await runCli(["show", "tau2_retail", "--task", "no-such-task"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no task 'no-such-task' in split base.*\[TASK_UNKNOWN\]/);
    const both = await runCli(["show", "tau2_retail", "--task", "34", "--index", "3"]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /OPTION_CONFLICT/);
    const generated = await runCli(["show", "search_plan_act", "--task", "x"]);
    assert.equal(generated.code, 2);
    assert.match(generated.stderr, /has no task ids/);
  });
});
