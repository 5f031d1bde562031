import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { ENVIRONMENTS, getEnvironment } from "../src/envs/registry.ts";
import { CUSTOMER_LEFT, CUSTOMER_TOOL } from "../src/envs/tau2/customer-tool.ts";
import { findTask, getDomain } from "../src/envs/tau2/domains.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";
import { generatePromptRows } from "../src/training/prompt-dataset.ts";
import { requirePython } from "./support/qwen3.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * tau2_mock through toolgym_trl and a real `toolgym serve`, as TRL's environment_factory loop drives it: the
 * customer is the tool send_message_to_user (the loop ends at a message without tool calls), reset returns
 * the customer's opening, and the reward is tau2's evaluation of the conversation.
 */
describe("toolgym_trl on tau2_mock with the customer as a tool (scripted user)", () => {
  let server: RunningServer;
  let work: string;
  let report: Json;
  before(async () => {
    const python = requirePython();
    server = await startServer({ environments: ENVIRONMENTS, port: 0 });
    work = mkdtempSync(join(tmpdir(), "toolgym-trl-tau2-"));
    const rows: string[] = [];
    for await (const row of generatePromptRows({ env: getEnvironment("tau2_mock"), split: "base", n: 1, seed: 0 })) rows.push(JSON.stringify(row));
    writeFileSync(join(work, "rows.jsonl"), `${rows.join("\n")}\n`);
    const task = findTask(getDomain("mock"), getDomain("mock").splits().base?.[0] as string);
    const gold = [
      ...(task.evaluation_criteria?.actions ?? []).map((action) => [action.name, action.arguments]),
      [CUSTOMER_TOOL, { content: "Your task has been created. Is there anything else I can help you with?" }],
    ];
    writeFileSync(join(work, "gold.json"), JSON.stringify(gold));
    // Asynchronous: the server runs in this process and must keep answering while Python talks to it.
    const result = await promisify(execFile)(
      python,
      [resolve(import.meta.dirname, "../python/tests/tau2_customer_trl.py"), "adapter", server.url, join(work, "rows.jsonl"), join(work, "gold.json")],
      { encoding: "utf8", env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" }, timeout: 180_000 },
    );
    report = JSON.parse(result.stdout.trim().split("\n").at(-1) as string) as Json;
  });
  after(async () => {
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("the generated class offers send_message_to_user; reset takes the dataset row's prompt, which ends with the customer's opening", () => {
    assert.ok(report.methods.includes(CUSTOMER_TOOL));
    assert.equal(report.reset_returned, null, "the row already carries the session's prompt (prompt_hash matched)");
    assert.deepEqual(report.prompt_roles, ["system", "assistant", "user"]);
  });

  it("the gold conversation scores 1.0, the customer's reply coming back as the tool's result", () => {
    assert.equal(report.gold.reward, 1);
    assert.equal(report.gold.done, true);
    assert.equal(report.gold.termination, "user_stop");
    assert.ok((report.gold.replies.at(-1) as string).endsWith(CUSTOMER_LEFT));
  });

  it("a conversation that does nothing scores 0: the customer says its problem stands, then ends the call", () => {
    assert.equal(report.do_nothing.replies.length, 3);
    assert.match(report.do_nothing.replies[0], /does not solve my problem/);
    assert.equal(report.do_nothing.done, true);
    assert.equal(report.do_nothing.reward, 0);
  });

  it("a session without a way to the user simulator fails at reset with one clear error, under tau2's protocol or with no config", () => {
    for (const name of ["leaderboard_protocol", "no_config"]) {
      const error = report.refused[name] as Json | null;
      assert.ok(error, `${name}: reset refused`);
      assert.equal(error.type, "ToolgymServerError");
      assert.match(error.message, /PROTOCOL_NOT_SERVABLE/);
      assert.match(error.message, /user simulator/);
      assert.match(error.message, /"customer": "tool"/);
    }
  });
});
