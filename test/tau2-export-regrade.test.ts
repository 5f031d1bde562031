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

/** A run's results.jsonl rewards, in task order. */
function rewardsByExample(text: string): number[] {
  return text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { example_id: number; metrics: { reward: number } })
    .sort((a, b) => a.example_id - b.example_id)
    .map((record) => record.metrics.reward);
}

describe("a model-driven tau2 run, exported, re-grades in tau2's Python to the recorded rewards", () => {
  it("telecom with float arguments: 8 tasks; rescored, the same rewards and floats", { timeout: 180_000 }, async () => {
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
    const recorded = rewardsByExample(readFileSync(join(directory, "results.jsonl"), "utf8"));
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

    // `toolgym rescore` grades the record's exact arguments (`arguments_json`), not results.jsonl's plain values
    // (where JSON.parse made 2.0 a 2): the rewards tau2 re-graded, and the floats kept in the new run and its export.
    const rescoredRoot = join(work, "rescored");
    const rescore = await runCli(["rescore", directory, "--out", rescoredRoot]);
    assert.equal(rescore.code, 0, rescore.stderr);
    const rescoredParent = join(rescoredRoot, readdirSync(rescoredRoot)[0] as string);
    const rescoredDirectory = join(rescoredParent, readdirSync(rescoredParent)[0] as string);
    const rescoredText = readFileSync(join(rescoredDirectory, "results.jsonl"), "utf8");
    const rescored = rewardsByExample(rescoredText);
    assert.deepEqual(
      rescored,
      regrade.simulations.map((simulation) => simulation.strict_regrade_reward),
      "rescore = tau2's strict re-grade",
    );
    const exactArguments = rescoredText
      .trim()
      .split("\n")
      .flatMap((line) =>
        (
          (JSON.parse(line) as Row).info as { trajectory: { reward: { diagnostics: { tau2_messages: Row[] } } } }
        ).trajectory.reward.diagnostics.tau2_messages.flatMap((message) =>
          ((message.tool_calls as Row[] | null) ?? []).map((call) => call.arguments_json as string),
        ),
      );
    assert.ok(exactArguments.includes('{"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0}'), `refuel_data keeps 2.0: ${exactArguments.join(" ")}`);
    assert.ok(exactArguments.includes('{"customer_id": "C1001", "limit": 1.0}'), "get_bills_for_customer keeps 1.0");
    const reexportedFile = join(work, "rescored.json");
    const reexported = await runCli(["export", rescoredDirectory, "--format", "tau2-results", "--out", reexportedFile]);
    assert.equal(reexported.code, 0, reexported.stderr);
    assert.deepEqual(
      (parsePythonJson(readFileSync(reexportedFile, "utf8")) as { simulations: Row[] }).simulations.map((simulation) => [
        simulation.task_id,
        callsText(simulation),
      ]),
      regraded.simulations.map((simulation) => [simulation.task_id, callsText(simulation)]),
      "the rescored run exports the calls tau2 re-graded (2.0 and 1.0 kept)",
    );
  });
});
