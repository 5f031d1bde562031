import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parsePythonJson, pythonJsonDumps } from "../src/python-semantics/index.ts";
import { startTau2ScriptServer, type ScriptScenario } from "../src/testing/tau2-script-server.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * A model-driven telecom run whose agent writes `"gb_amount": 2.0` and `"limit": 1.0`, exported with
 * `toolgym export --format tau2-results`, re-grades in tau2's own Python to the rewards toolgym recorded
 * (fixtures/tau2/export-regrade: the exported file and tau2's re-grade of it, made by tau2's Python).
 */
const folder = join(import.meta.dirname, "fixtures/tau2/export-regrade");
const scenarios = (JSON.parse(readFileSync(join(folder, "scenarios.json"), "utf8")) as { scenarios: ScriptScenario[] }).scenarios;
const regrade = JSON.parse(readFileSync(join(folder, "regrade.json"), "utf8")) as {
  simulations: {
    task_id: string;
    recorded_reward: number;
    regrade_reward: number;
    strict_regrade_reward: number | null;
    strict_regrade_error: string | null;
  }[];
  regrade_metrics: { avg_reward: number; pass_hat_ks: Record<string, number> };
};
const regraded = parsePythonJson(readFileSync(join(folder, "exported.json"), "utf8")) as { simulations: Record<string, unknown>[] };
const work = mkdtempSync(join(tmpdir(), "toolgym-tau2-regrade-"));

type Row = Record<string, unknown>;

/** A simulation's tool calls as Python's json.dumps writes them (2.0 stays 2.0), in order. */
function callsText(simulation: Row): string[] {
  return (simulation.messages as Row[]).flatMap((message) =>
    ((message.tool_calls as Row[] | null) ?? []).map((call) => pythonJsonDumps({ name: call.name, arguments: call.arguments, requestor: call.requestor })),
  );
}

describe("a model-driven tau2 run, exported, re-grades in tau2's Python to the recorded rewards", () => {
  it("telecom with float arguments: 8 tasks", { timeout: 120_000 }, async () => {
    const server = await startTau2ScriptServer(scenarios);
    const out = join(work, "runs");
    try {
      const run = await runCli([
        "eval",
        "--env",
        "tau2_telecom",
        "--split",
        "small",
        "--n",
        "8",
        "--model",
        `float=${server.url}#telecom_export_float`,
        "--user-model",
        `${server.url}#telecom_export_float/user`,
        "--out",
        out,
        "--quiet",
        "--workers",
        "1",
        "--no-preflight",
      ]);
      assert.equal(run.code, 0, run.stderr);
    } finally {
      await server.close();
    }
    const parent = join(out, readdirSync(out)[0] as string);
    const directory = join(parent, readdirSync(parent)[0] as string);
    const file = join(work, "exported.json");
    const exported = await runCli(["export", directory, "--format", "tau2-results", "--out", file]);
    assert.equal(exported.code, 0, exported.stderr);
    const text = readFileSync(file, "utf8");
    assert.match(text, /"gb_amount": 2\.0/, "the model's 2.0 is exported as Python wrote it");
    const results = parsePythonJson(text) as { simulations: Row[] };

    // The rewards toolgym recorded are the rewards tau2's Python re-graded from the exported file.
    const recorded = readFileSync(join(directory, "results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { example_id: number; metrics: { reward: number } })
      .sort((a, b) => a.example_id - b.example_id)
      .map((record) => record.metrics.reward);
    assert.deepEqual(
      recorded,
      regrade.simulations.map((simulation) => simulation.regrade_reward),
      "tau2 evaluate-trajs re-grade",
    );
    assert.deepEqual(
      recorded,
      regrade.simulations.map((simulation) => simulation.strict_regrade_reward),
      "tau2 strict re-grade (a live run's replay)",
    );
    assert.ok(recorded.includes(1), "the float-argument task is solved, and re-grades as solved");
    // What tau2 re-graded is what toolgym exports: the same simulations, the same typed tool calls.
    assert.deepEqual(
      results.simulations.map((simulation) => [simulation.task_id, callsText(simulation)]),
      regraded.simulations.map((simulation) => [simulation.task_id, callsText(simulation)]),
    );
  });
});
