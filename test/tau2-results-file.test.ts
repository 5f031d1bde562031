import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import { runCli } from "./support/run-cli.ts";

/**
 * `toolgym export RUN --format tau2-results` against tau2's own files: the JSON Schema of its `Results`
 * model and two results files its runner wrote (test/fixtures/tau2/results/README.md). An export must
 * validate, and have the samples' layout: the same keys in the same order at every level, the tasks
 * dumped as tau2 dumps them, floats as floats, and Python's `json.dump(indent=2)` text.
 */
const fixtures = join(import.meta.dirname, "fixtures/tau2/results");
const schema = JSON.parse(readFileSync(join(fixtures, "results_schema.json"), "utf8"));
const samples = {
  mock: readFileSync(join(fixtures, "results_sample_mock.json"), "utf8"),
  retail: readFileSync(join(fixtures, "results_sample_retail.json"), "utf8"),
};
const validate = new Ajv2020({ strict: false, allErrors: true, validateFormats: false }).compile(schema);
const work = mkdtempSync(join(tmpdir(), "toolgym-tau2-results-"));

type Json = Record<string, unknown>;

function runDirectory(root: string): string {
  const parent = join(root, readdirSync(root)[0] as string);
  return join(parent, readdirSync(parent)[0] as string);
}

async function exportRun(name: string, args: string[]): Promise<{ text: string; results: Json; directory: string }> {
  const out = join(work, name);
  const run = await runCli(["eval", ...args, "--out", out, "--quiet", "--workers", "1"]);
  assert.equal(run.code, 0, run.stderr);
  const directory = runDirectory(out);
  const file = join(work, `${name}.json`);
  const exported = await runCli(["export", directory, "--format", "tau2-results", "--out", file]);
  assert.equal(exported.code, 0, exported.stderr);
  const text = readFileSync(file, "utf8");
  return { text, results: JSON.parse(text) as Json, directory };
}

function errorsOf(value: unknown): string {
  validate(value);
  return JSON.stringify(validate.errors?.slice(0, 3));
}

/** The keys of every message of a list by role, in order (the samples fix them per role). */
function messageKeys(messages: unknown): Map<string, string> {
  const keys = new Map<string, string>();
  for (const message of messages as Json[]) keys.set(String(message.role), Object.keys(message).join(","));
  return keys;
}

/**
 * The text layout of Python's `json.dump(obj, fp, indent=2)`: ASCII only (ensure_ascii), no final newline,
 * one member per line indented by two spaces per level, "," without a trailing space, empty containers inline.
 */
function isPythonIndent2(text: string): boolean {
  if (text.endsWith("\n") || !/^[\x20-\x7e\n]*$/.test(text)) return false;
  let depth = 0;
  return text.split("\n").every((line) => {
    const indent = (/^ */.exec(line) as RegExpExecArray)[0].length;
    const nested = indent % 2 === 0 && indent <= depth + 2;
    depth = indent;
    return nested && !line.endsWith(" ") && !/^\s*[\]}]\s*[\]}]/.test(line);
  });
}

describe("tau2 results file", () => {
  it("tau2's own samples validate against its schema, and a broken copy does not (the validator checks)", () => {
    for (const text of Object.values(samples)) assert.ok(validate(JSON.parse(text)), errorsOf(JSON.parse(text)));
    const broken = JSON.parse(samples.mock) as { simulations: Json[] };
    delete broken.simulations[0]?.task_id;
    assert.equal(validate(broken), false);
  });

  it("a mock run exported with --format tau2-results validates and has the sample's layout", { timeout: 120_000 }, async () => {
    const { text, results } = await exportRun("mock", ["--env", "tau2_mock", "--num-trials", "2"]);
    assert.ok(validate(results), errorsOf(results));
    const sample = JSON.parse(samples.mock) as Json;
    assert.deepEqual(Object.keys(results), Object.keys(sample));
    const info = results.info as Json;
    const sampleInfo = sample.info as Json;
    assert.deepEqual(Object.keys(info), Object.keys(sampleInfo));
    for (const key of ["user_info", "agent_info", "environment_info", "text_streaming_config"])
      assert.deepEqual(Object.keys(info[key] as Json), Object.keys(sampleInfo[key] as Json), key);
    assert.equal(info.num_trials, 2);
    assert.equal(info.seed, 300);
    assert.deepEqual(info.environment_info, sampleInfo.environment_info, "the domain's policy, as tau2 records it");

    // The sample's three tasks, dumped as tau2 dumps them (message-history timestamps are load times in tau2).
    const tasks = new Map((results.tasks as Json[]).map((task) => [task.id, task]));
    assert.equal(tasks.size, 10);
    const stamp = (value: unknown) => JSON.stringify(value).replace(/"timestamp":"[^"]*"/g, '"timestamp":"T"');
    for (const task of sample.tasks as Json[]) assert.equal(stamp(tasks.get(task.id)), stamp(task), String(task.id));

    const simulations = results.simulations as Json[];
    assert.equal(simulations.length, 20);
    const sampleSimulation = (sample.simulations as Json[])[0] as Json;
    const sampleMessages = messageKeys((sample.simulations as Json[]).flatMap((simulation) => simulation.messages as Json[]));
    for (const simulation of simulations) {
      assert.deepEqual(Object.keys(simulation), Object.keys(sampleSimulation));
      assert.deepEqual(Object.keys(simulation.reward_info as Json), Object.keys(sampleSimulation.reward_info as Json));
      for (const [role, keys] of messageKeys(simulation.messages)) assert.equal(keys, sampleMessages.get(role), role);
      assert.equal(simulation.policy, sampleSimulation.policy);
    }
    const firstTrials = simulations.filter((simulation) => simulation.trial === 0).map((simulation) => simulation.seed);
    assert.deepEqual([...new Set(firstTrials)], [626729], "trial 0 of base seed 300 runs with tau2's seed 626729");
    const created = simulations.find((simulation) => simulation.task_id === "create_task_1_with_env_assertions") as Json;
    assert.equal(created.termination_reason, "user_stop");
    assert.equal((created.reward_info as Json).reward, 1);

    assert.ok(isPythonIndent2(text), "Python's json.dump(indent=2) text: ASCII, no trailing newline");
    assert.ok(isPythonIndent2(samples.mock), "the check accepts tau2's own file");
    assert.match(text, /"reward": 1\.0,/, "rewards are floats, as tau2 writes them");
    assert.match(text, /"duration": \d+\.\d+/);
  });

  it("a retail run without a judge marks the simulations whose NL assertions were not computed", { timeout: 300_000 }, async () => {
    const { results, directory } = await exportRun("retail", ["--env", "tau2_retail", "--n", "10"]);
    assert.ok(validate(results), errorsOf(results));
    const sample = JSON.parse(samples.retail) as Json;
    assert.deepEqual(Object.keys((results.tasks as Json[])[0] as Json), Object.keys((sample.tasks as Json[])[0] as Json));
    const rows = readFileSync(join(directory, "results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { not_computed?: string[] });
    const partial = (results.simulations as Json[]).filter((simulation) => /NL_ASSERTION not computed/.test(JSON.stringify(simulation.reward_info)));
    assert.equal(partial.length, rows.filter((row) => row.not_computed?.includes("NL_ASSERTION")).length);
    assert.ok(partial.length > 0);
    for (const simulation of partial) assert.ok(!((simulation.reward_info as Json).reward_basis as string[]).includes("NL_ASSERTION"));
  });
});
