import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { babyaiEnvironment } from "./index.ts";
import { formatFixedLikePython, summarizeEnvironment, summarizeOverall, summaryTable, type BalrogEpisode, type BalrogStats } from "./summary.ts";

interface TaskEpisodes {
  progression: number[];
  num_steps: number[];
}
interface ProgressionCase {
  id: string;
  name: string;
  input: Record<string, Record<string, TaskEpisodes>>;
  read_order: Array<{ file: string; env: string; task: string; progression: number }>;
  expected: {
    summary: { average_progress: number; standard_error: number; environments: Record<string, BalrogStats> };
    env_summaries: Record<string, BalrogStats & { average_steps: number; tasks: Record<string, BalrogStats> }>;
    printed: string;
  };
}
const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "../../../test/fixtures/balrog/progression_cases.json"), "utf8")) as {
  cases: ProgressionCase[];
};

/** A case's episodes per environment in BALROG's read order; `_run_NN.json` is the index in the input lists. */
function episodesInReadOrder(example: ProgressionCase): Map<string, BalrogEpisode[]> {
  const byEnvironment = new Map<string, BalrogEpisode[]>();
  for (const entry of example.read_order) {
    const run = Number(/_run_(\d+)\.json$/.exec(entry.file)![1]);
    const source = example.input[entry.env]![entry.task]!;
    assert.equal(source.progression[run], entry.progression, entry.file);
    const list = byEnvironment.get(entry.env) ?? byEnvironment.set(entry.env, []).get(entry.env)!;
    list.push({ task: entry.task, progression: entry.progression, num_steps: source.num_steps[run] });
  }
  return byEnvironment;
}

function assertClose(actual: number, expected: number, label: string): void {
  assert.ok(Math.abs(actual - expected) <= 1e-9, `${label}: ${actual} vs ${expected}`);
}

describe("BALROG summary numbers (progression % ± standard error)", () => {
  it("formats like Python's '{:.2f}': the exact binary value, exact ties to even", () => {
    const cases: Array<[number, string]> = [
      [3.125, "3.12"], // exact tie: even neighbour (toFixed gives 3.13)
      [3.375, "3.38"],
      [0.125, "0.12"],
      [2.675, "2.67"], // 2.67499999999999982236431605997495353221893310546875
      [1.005, "1.00"], // 1.00499999999999989341858963598497211933135986328125
      [0.285, "0.28"], // 0.284999999999999975575093458246556110680103302001953125
      [44.4, "44.40"],
      [66.66666666666666, "66.67"],
      [3.0757843257858632, "3.08"],
      [0, "0.00"],
      [-0, "-0.00"],
      [-0.001, "-0.00"],
      [-3.125, "-3.12"],
      [100, "100.00"],
      [1e22, "10000000000000000000000.00"],
      [5e-324, "0.00"],
      [Number.NaN, "nan"],
      [Number.POSITIVE_INFINITY, "inf"],
    ];
    for (const [value, text] of cases) assert.equal(formatFixedLikePython(value, 2), text, String(value));
    assert.equal(formatFixedLikePython(2.5, 0), "2");
    assert.equal(formatFixedLikePython(3.5, 0), "4");
    assert.equal(formatFixedLikePython(0.5, 3), "0.500");
  });

  it(`reproduces all ${fixture.cases.length} reference cases: environment, task, overall numbers and the printed table`, () => {
    assert.equal(fixture.cases.length, 5);
    for (const example of fixture.cases) {
      const environments: Record<string, BalrogStats> = {};
      for (const [name, episodes] of episodesInReadOrder(example)) {
        const summary = summarizeEnvironment(episodes);
        const expected = example.expected.env_summaries[name]!;
        const label = `${example.id} ${name}`;
        assertClose(summary.progression_percentage, expected.progression_percentage, `${label} progression`);
        assertClose(summary.standard_error, expected.standard_error, `${label} standard error`);
        assertClose(summary.average_steps, expected.average_steps, `${label} average steps`);
        assert.equal(summary.episodes_played, expected.episodes_played, label);
        // Summed in BALROG's read order, the fixture says the official values come out bit for bit.
        assert.equal(summary.progression_percentage, expected.progression_percentage, `${label} progression, bitwise`);
        assert.equal(summary.standard_error, expected.standard_error, `${label} standard error, bitwise`);
        assert.deepEqual(Object.keys(summary.tasks).sort(), Object.keys(expected.tasks).sort(), label);
        for (const [task, stats] of Object.entries(expected.tasks)) {
          assertClose(summary.tasks[task]!.progression_percentage, stats.progression_percentage, `${label} ${task}`);
          assertClose(summary.tasks[task]!.standard_error, stats.standard_error, `${label} ${task} se`);
          assert.equal(summary.tasks[task]!.episodes_played, stats.episodes_played, `${label} ${task} n`);
        }
        environments[name] = summary;
      }
      const overall = summarizeOverall(environments);
      assertClose(overall.average_progress, example.expected.summary.average_progress, `${example.id} overall`);
      assertClose(overall.standard_error, example.expected.summary.standard_error, `${example.id} overall se`);
      assert.equal(summaryTable(environments), example.expected.printed, example.id);
    }
  });

  it("summarizes a babyai run through the definition's hook with BALROG's printed line", () => {
    const spec = babyaiEnvironment.summary!;
    assert.deepEqual([spec.key, spec.label], ["balrog", "BALROG"]);
    const prog09 = fixture.cases.find((example) => example.id === "prog09")!;
    const episodes = episodesInReadOrder(prog09)
      .get("babyai")!
      .map((episode) => ({
        metrics: { progression: episode.progression!, return: 0 },
        diagnostics: { task: episode.task.replace("BabyAI-MixedTrainLocal-v0/", ""), steps: episode.num_steps! },
      }));
    const summary = spec.summarize(episodes);
    assert.equal(summary.text, "  babyai: 3.12% ± 3.08%, Episodes: 32");
    assert.equal(summary.text, prog09.expected.printed.split("\n").at(-2));
    assert.equal(summary.episodes, 32);
    assertClose(summary.progression as number, 3.125, "progression");
    assertClose(summary.stderr as number, 3.0757843257858632, "stderr");
    assertClose(summary.average_steps as number, 63.5, "average steps");
    const goto = (summary.tasks as Record<string, { progression: number; episodes: number }>)["BabyAI-MixedTrainLocal-v0/goto"]!;
    assert.equal(goto.episodes, 7);
    assertClose(goto.progression, 14.285714285714285, "goto");
    // A missing progression counts as 0, as BALROG's dict.get(..., 0.0) does.
    assert.equal(spec.summarize([{ metrics: { progression: 1 } }, { metrics: {} }]).text, "  babyai: 50.00% ± 35.36%, Episodes: 2");
    assert.equal(spec.summarize([]).text, "  babyai: 0.00% ± 0.00%, Episodes: 0");
  });
});
