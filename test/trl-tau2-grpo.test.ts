import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { CUSTOMER_LEFT, CUSTOMER_TOOL } from "../src/envs/tau2/customer-tool.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";
import { requirePython } from "./support/qwen3.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = resolve(import.meta.dirname, "..");
const run = promisify(execFile);
const options = { cwd: ROOT, encoding: "utf8" as const, env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", OMP_NUM_THREADS: "2" }, timeout: 30 * 60_000 };
const toolgym = (args: string[]) => run(process.execPath, [join(ROOT, "bin/toolgym.js"), ...args], options);

/**
 * A real TRL GRPO run on CPU on tau2_mock (customer as a tool, scripted user) from a tiny Qwen3 that SFT made
 * partly competent: a vocabulary learnt from the scripted oracle's conversations, pretrained on them, then SFT
 * on their `sft tau2` rows (a random model makes no tool call, so every group would score 0). TRL's own tool loop
 * keeps going while the policy calls tools, the customer's replies come back as send_message_to_user's results.
 */
describe("TRL GRPO on tau2_mock: the customer in the loop (CPU, tiny model after SFT)", () => {
  let server: RunningServer;
  let work: string;
  let report: Json;
  before(async () => {
    const python = requirePython();
    work = mkdtempSync(join(tmpdir(), "toolgym-trl-tau2-grpo-"));
    const at = (name: string) => join(work, name);
    const customerTool = JSON.stringify({ customer: "tool" });
    await toolgym([
      "eval",
      "--env",
      "tau2_mock",
      "--agent",
      "oracle",
      "--split",
      "base",
      "--n",
      "10",
      "--config",
      customerTool,
      "--out",
      at("runs"),
      "--run-id",
      "o",
      "--quiet",
    ]);
    await toolgym(["sft", "conversations", at("runs"), "--out", at("corpus.jsonl")]);
    await toolgym(["export", join(at("runs"), "tau2_mock--scripted-oracle", "o"), "--format", "tau2-sft", "--out", at("lines.jsonl")]);
    await toolgym(["dataset", "tau2_mock", "--split", "base", "--n", "10", "--out", at("rows.jsonl")]);
    const make = [join(ROOT, "scripts/make-tiny-qwen3.py"), at("base"), "--corpus", at("corpus.jsonl"), "--vocab-size", "1024", "--pretrain-steps", "300"];
    await run(python, [...make, "--hidden-size", "64", "--layers", "2"], options);
    await toolgym([
      "sft",
      "tau2",
      at("lines.jsonl"),
      "--model-dir",
      at("base"),
      "--out",
      at("sft.jsonl"),
      "--max-tokens",
      "2048",
      "--enable-thinking",
      "false",
    ]);
    const sft = [
      join(ROOT, "python/train_sft.py"),
      "--model",
      at("base"),
      "--dataset",
      at("sft.jsonl"),
      "--output-dir",
      at("sft"),
      "--use-cpu",
      "--max-steps",
      "150",
    ];
    const schedule = ["--per-device-batch-size", "4", "--gradient-accumulation-steps", "1", "--learning-rate", "1e-3", "--lr-scheduler-type", "constant"];
    await run(python, [...sft, ...schedule, "--warmup-ratio", "0", "--logging-steps", "25"], options);
    server = await startServer({ environments: ENVIRONMENTS, port: 0 });
    // Asynchronous: the server runs in this process and must keep answering while TRL talks to it.
    const driver = join(ROOT, "python/tests/tau2_customer_trl.py");
    const result = await run(python, [driver, "grpo", server.url, at("rows.jsonl"), at("sft"), at("grpo")], options);
    report = JSON.parse(result.stdout.trim().split("\n").at(-1) as string) as Json;
  });
  after(async () => {
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const steps = () => (report.log_history as Json[]).filter((entry) => typeof entry.reward === "number");

  it("TRL logged its steps", () => {
    assert.equal(steps().length, 2, JSON.stringify(report.log_history));
  });

  it("rewards vary within groups: frac_reward_zero_std below 1", () => {
    const fractions = steps().map((entry) => entry.frac_reward_zero_std as number);
    assert.ok(Math.min(...fractions) < 1, `frac_reward_zero_std per step: ${fractions.join(", ")}`);
    const rewards = (report.completions as Json[]).map((completion) => completion.reward as number);
    assert.ok(rewards.includes(1) && rewards.includes(0), `rewards: ${rewards.join(", ")}`);
  });

  it("more than one tool call per completion (TRL's tools/call_frequency)", () => {
    const frequencies = steps().map((entry) => entry["tools/call_frequency"] as number);
    assert.ok(Math.max(...frequencies) > 1, `tools/call_frequency per step: ${frequencies.join(", ")}`);
    assert.ok((report.completions as Json[]).some((completion) => completion.calls > 1));
  });

  it("the customer's replies appear in the completions, as send_message_to_user's results", () => {
    const replies = (report.completions as Json[]).flatMap((completion) => {
      const messages = completion.messages as Json[];
      return messages.flatMap((message, position) => {
        const asked = (messages[position - 1]?.tool_calls as Json[] | undefined)?.some((call) => call.function?.name === CUSTOMER_TOOL);
        return message.role === "tool" && asked ? [message.content as string] : [];
      });
    });
    assert.ok(replies.length > 0, "a completion reached the customer");
    // The scripted user's stop marker and the tool's end-of-conversation line: the customer answered and left.
    assert.ok(
      replies.some((reply) => reply.includes("###STOP###") && reply.endsWith(CUSTOMER_LEFT)),
      replies.join("\n"),
    );
  });
});
