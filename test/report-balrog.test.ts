import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parseConfig } from "../src/core/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { buildReport, loadInputs, renderCard, renderHtml, renderMarkdown, renderReport } from "../src/eval/report/index.ts";
import { runEvaluation } from "../src/eval/run-evaluation.ts";
import { writeSyntheticRun, type SyntheticEpisode } from "./report-support.ts";

interface ProgressionCase {
  id: string;
  input: Record<string, Record<string, { progression: number[] }>>;
  expected: { env_summaries: Record<string, { progression_percentage: number; standard_error: number; episodes_played: number }>; printed: string };
}
const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures/balrog/progression_cases.json"), "utf8")) as { cases: ProgressionCase[] };

/** A case's BabyAI episodes as toolgym results (progression and a return of 0.5 on success). */
function episodesOf(id: string): { episodes: SyntheticEpisode[]; expected: ProgressionCase["expected"]["env_summaries"][string]; line: string } {
  const example = fixture.cases.find((candidate) => candidate.id === id)!;
  const episodes = Object.values(example.input.babyai!).flatMap((task) =>
    task.progression.map((progression) => ({ metrics: { return: progression * 0.5, progression } })),
  );
  const line = example.expected.printed.split("\n").find((text) => text.startsWith("  babyai: "))!;
  return { episodes, expected: example.expected.env_summaries.babyai!, line };
}

interface BalrogField {
  model: string;
  progression: number;
  stderr: number;
  episodes: number;
  text: string;
}

describe("report: BALROG's own BabyAI numbers beside the bootstrap CI", () => {
  let root: string;
  const baseline = episodesOf("prog09");
  const treatment = episodesOf("prog17");
  before(() => {
    root = mkdtempSync(join(tmpdir(), "toolgym-report-balrog-"));
    // An errored episode is not part of BALROG's numbers (it is excluded from toolgym's means too).
    writeSyntheticRun({ root, benchmark: "babyai", label: "base", metrics: ["return"], episodes: [...baseline.episodes, { metrics: {}, errored: true }] });
    writeSyntheticRun({ root, benchmark: "babyai", label: "tuned", metrics: ["return"], episodes: treatment.episodes, seed: 0 });
    writeSyntheticRun({ root, benchmark: "search_plan_act", label: "base", metrics: ["reward"], episodes: [{ metrics: { reward: 1 } }] });
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("adds `balrog` {progression, stderr, episodes, text} to the BabyAI row of the JSON report, per model", () => {
    const report = buildReport(loadInputs([root]), { allowMismatch: true });
    const json = JSON.parse(renderReport(report, { format: "json" })) as {
      rows: Array<{ benchmark: string; balrog?: BalrogField; summary?: { key: string; label: string; models: Record<string, BalrogField> } }>;
    };
    const row = json.rows.find((candidate) => candidate.benchmark === "babyai")!;
    assert.equal(row.balrog!.text, baseline.line);
    assert.equal(row.balrog!.text, "  babyai: 3.12% ± 3.08%, Episodes: 32");
    assert.deepEqual([row.balrog!.model, row.balrog!.episodes], ["base", 32]);
    assert.ok(Math.abs(row.balrog!.progression - baseline.expected.progression_percentage) <= 1e-9);
    assert.ok(Math.abs(row.balrog!.stderr - baseline.expected.standard_error) <= 1e-9);
    assert.deepEqual([row.summary!.key, row.summary!.label], ["balrog", "BALROG"]);
    const tuned = row.summary!.models.tuned!;
    assert.equal(tuned.text, treatment.line);
    assert.equal(tuned.text, "  babyai: 44.40% ± 3.14%, Episodes: 250");
    assert.equal(tuned.episodes, treatment.expected.episodes_played);
    assert.ok(Math.abs(tuned.stderr - treatment.expected.standard_error) <= 1e-9);
    assert.equal(json.rows.find((candidate) => candidate.benchmark === "search_plan_act")!.balrog, undefined, "only environments with the hook");
  });

  it("shows BALROG's line beside the CI in the markdown report, the card and the HTML page", () => {
    const report = buildReport(loadInputs([root]), { allowMismatch: true });
    const markdown = renderMarkdown(report);
    // The two runs have different task sets (32 and 250 episodes), hence --allow-mismatch and the ⚠.
    const line = markdown.split("\n").find((text) => text.startsWith("| babyai ⚠ |"))!;
    assert.match(
      line,
      /^\| babyai ⚠ \| mean episode return \| 0\.016 \[[^\]]+\] \(n=32, 1 errored\); BALROG babyai: 3\.12% ± 3\.08%, Episodes: 32 \| 0\.222 \[[^\]]+\] \(n=250\); BALROG babyai: 44\.40% ± 3\.14%, Episodes: 250 \|/,
    );
    assert.match(markdown, /BALROG: the benchmark's own summary of every scored episode/);
    const card = renderCard(report);
    assert.match(
      card,
      /^\| babyai ⚠ \| mean episode return \| 250 \| 0\.016 \[[^\]]+\] \(n=32, 1 errored\); BALROG babyai: 3\.12% ± 3\.08%, Episodes: 32 \| /m,
    );
    assert.match(renderHtml(report), /BALROG babyai: 44\.40% ± 3\.14%, Episodes: 250<\/td>/);
    assert.doesNotMatch(
      markdown.split("\n").find((text) => text.startsWith("| search_plan_act |"))!,
      /BALROG/,
    );
  });

  it("summarizes real runs from results.jsonl, per task from each episode's diagnostics (chain-of-thought config)", async () => {
    const directory = mkdtempSync(join(tmpdir(), "toolgym-report-balrog-real-"));
    try {
      const env = getEnvironment("babyai");
      await runEvaluation({
        rows: [
          {
            env,
            config: parseConfig("babyai", env.configSchema, '{"balrog_agent":"cot"}'),
            split: "eval",
            seed: 0,
            n: 10,
            benchmark: "babyai",
            metrics: ["return"],
          },
        ],
        models: [
          { kind: "scripted", label: "oracle", policy: "oracle" },
          { kind: "scripted", label: "spin", policy: "spin_in_place" },
        ],
        out: join(directory, "runs"),
        quiet: true,
      });
      const report = buildReport(loadInputs([join(directory, "runs")]));
      const row = report.rows[0] as unknown as { balrog: BalrogField & { tasks: Record<string, { episodes: number; progression: number }> } };
      assert.equal(row.balrog.text, "  babyai: 100.00% ± 0.00%, Episodes: 10");
      assert.deepEqual(Object.keys(row.balrog.tasks).sort(), [
        "BabyAI-MixedTrainLocal-v0/goto",
        "BabyAI-MixedTrainLocal-v0/open",
        "BabyAI-MixedTrainLocal-v0/pick_up_seq_go_to",
        "BabyAI-MixedTrainLocal-v0/pickup",
        "BabyAI-MixedTrainLocal-v0/putnext",
      ]);
      assert.ok(Object.values(row.balrog.tasks).every((task) => task.episodes === 2 && task.progression === 100));
      assert.equal(report.rows[0]!.summary!.models.spin!.text, "  babyai: 0.00% ± 0.00%, Episodes: 10");
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
