import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  createRandom,
  type BenchmarkSummary,
  type ExportEpisode,
  type JsonValue,
  type RewardBreakdown,
  type RunExporter,
  type SummaryEpisode,
} from "../../core/index.ts";
import { RunTotals } from "../../eval/summary.ts";
import { EpisodeDriver } from "../../rollout/episode-driver.ts";
import { runEpisode } from "../../rollout/run-episode.ts";
import { digestOf, resultFromTrajectory } from "../../runs/record.ts";
import { createScriptedAgent, type ScriptedDecision } from "../_kit/scripted.ts";
import { DATASET_FILES, resolveDataSource } from "./dataset.ts";
import { MULTIHOP_FIXTURES } from "./fixtures.ts";
import { musiqueEnvironment, type MultihopTask } from "./index.ts";
import { multihopPolicies } from "./policies/index.ts";
import { metricValues, scoreMusiqueFiles } from "./score-files.ts";

/** The musique environment on MuSiQue-Full data (the 40-line Full fixture: 20 ids, each with an unanswerable twin). */
const FOLDER = join(MULTIHOP_FIXTURES, "musique_full");
const GOLD = join(FOLDER, "gold_full.jsonl");
const expected = JSON.parse(readFileSync(join(FOLDER, "expected.json"), "utf8")) as {
  variants: Record<string, { unrounded_diagnostic: Record<string, number>; metrics: Record<string, number> }>;
};

interface PredictionLine {
  id: string;
  predicted_answer: string;
  predicted_support_idxs: number[];
  predicted_answerable: boolean;
}
const readPredictions = (name: string): PredictionLine[] =>
  readFileSync(join(FOLDER, name), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as PredictionLine);
const goldAnswerable = readFileSync(GOLD, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((line) => (JSON.parse(line) as { answerable: boolean }).answerable);

function task(index: number, mode = "search"): MultihopTask {
  const config = musiqueEnvironment.configSchema.parse({ mode, file: GOLD });
  return musiqueEnvironment.generate({ split: "dev", seed: 0, index, config });
}

async function finish(index: number, args: Record<string, unknown>): Promise<RewardBreakdown> {
  const episode = musiqueEnvironment.start(task(index));
  const result = episode.call("finish", args);
  assert.equal(result.isError, false, JSON.stringify(result));
  return episode.reward({ turnsUsed: 1, maxTurns: 12, endedBy: "finished" });
}

const directory = mkdtempSync(join(tmpdir(), "toolgym-full-run-"));
const firstUnanswerable = goldAnswerable.indexOf(false);
const firstAnswerable = goldAnswerable.indexOf(true);

describe("musique environment on MuSiQue-Full data", () => {
  it("loads the Full file with its unanswerable twins; subset full reads musique_full_v1.0_dev.jsonl from data_dir", () => {
    assert.equal(task(firstUnanswerable).full, true);
    assert.equal(task(firstUnanswerable).example.answerable, false);
    assert.equal(task(firstUnanswerable).count, 40);
    const directory = mkdtempSync(join(tmpdir(), "toolgym-full-"));
    copyFileSync(GOLD, join(directory, DATASET_FILES.musique.full as string));
    assert.equal(resolveDataSource("musique", { data_dir: directory, subset: "full" }).file, join(directory, "musique_full_v1.0_dev.jsonl"));
    assert.equal(resolveDataSource("musique", { data_dir: directory }).file, join(directory, "musique_ans_v1.0_dev.jsonl"));
    const config = musiqueEnvironment.configSchema.parse({ data_dir: directory, subset: "full" });
    assert.equal(musiqueEnvironment.generate({ split: "dev", seed: 0, index: firstUnanswerable, config }).example.answerable, false);
  });

  it("offers finish(answerable: false) and says so in the prompt only on Full data; the public view does not leak answerability", () => {
    const full = musiqueEnvironment.start(task(0));
    const finishTool = full.tools.find((tool) => tool.function.name === "finish");
    assert.ok(JSON.stringify(finishTool).includes('"answerable"'));
    assert.match(full.messages[0]?.content as string, /answerable: false/);
    const ans = musiqueEnvironment.start(musiqueEnvironment.generate({ split: "dev", seed: 0, index: 0, config: musiqueEnvironment.configSchema.parse({}) }));
    assert.ok(!JSON.stringify(ans.tools).includes('"answerable"'));
    assert.doesNotMatch(ans.messages[0]?.content as string, /unanswerable/);
    const view = JSON.stringify(musiqueEnvironment.publicView(task(firstUnanswerable)));
    assert.doesNotMatch(view, /answerable/);
  });

  it("an unanswerable question: abstaining scores 1, answering scores 0, and there is no answer F1", async () => {
    for (const args of [{ answerable: false }, { answer: "Unanswerable." }, { answer: "", answerable: false }]) {
      const reward = await finish(firstUnanswerable, args);
      assert.equal(reward.total, 1, JSON.stringify(args));
      assert.deepEqual(reward.components, { answerable_correct: 1, answer_sufficiency_f1: 1 });
    }
    const answered = await finish(firstUnanswerable, { answer: task(firstUnanswerable).example.answer });
    assert.equal(answered.total, 0);
    assert.deepEqual(answered.components, { answerable_correct: 0, answer_sufficiency_f1: 0 });
  });

  it("an answerable question: the official F1/EM ignore the verdict, the total is gated by it", async () => {
    const gold = task(firstAnswerable).example.answer;
    const right = await finish(firstAnswerable, { answer: gold });
    assert.equal(right.total, 1);
    assert.equal(right.components.f1, 1);
    assert.equal(right.components.answerable_correct, 1);
    const abstained = await finish(firstAnswerable, { answer: gold, answerable: false });
    assert.equal(abstained.total, 0);
    assert.equal(abstained.components.f1, 1);
    assert.equal(abstained.components.em, 1);
    assert.equal(abstained.components.answerable_correct, 0);
  });

  it("rejects a finish without an answer (unless abstaining) and a non-boolean answerable", () => {
    const config = musiqueEnvironment.configSchema.parse({ mode: "search", file: GOLD });
    const driver = new EpisodeDriver({ env: musiqueEnvironment, split: "dev", seed: 0, index: 0, config, task: task(0) });
    assert.equal(driver.call({ name: "finish", arguments: {} }).isError, true);
    assert.equal(driver.call({ name: "finish", arguments: { answer: "x", answerable: "no" } }).isError, true);
    assert.equal(driver.done, false);
  });

  it("text modes: a last line 'Answer: unanswerable' abstains", async () => {
    for (const mode of ["context", "closed_book"]) {
      const episode = musiqueEnvironment.start(task(firstUnanswerable, mode));
      assert.match(episode.messages[0]?.content as string, /Answer: unanswerable/);
      await episode.reply?.("The paragraphs never name the county.\nAnswer: unanswerable");
      const reward = await episode.reward({ turnsUsed: 1, maxTurns: 1, endedBy: "finished" });
      assert.equal(reward.total, 1, mode);
      assert.equal(episode.diagnostics?.().predicted_answerable, false);
    }
  });
});

/**
 * Replays an official prediction file through the environment, one episode per line: the agent reads the
 * titles of its predicted support paragraphs, then finishes with the predicted answer and answerability.
 * Returns the run summary's metric means and the environment's own summary of the run.
 */
async function replayRun(predictions: PredictionLine[]): Promise<{ means: Record<string, number>; official: BenchmarkSummary; exported: ExportEpisode[] }> {
  const totals = new RunTotals();
  const episodes: SummaryEpisode[] = [];
  const exported: ExportEpisode[] = [];
  const config = musiqueEnvironment.configSchema.parse({ mode: "search", file: GOLD });
  for (const [index, line] of predictions.entries()) {
    const paragraphs = task(index).example.paragraphs;
    const titles = [...new Set(line.predicted_support_idxs.map((idx) => paragraphs.find((paragraph) => paragraph.idx === Number(idx))?.title as string))];
    const finish: ScriptedDecision = {
      calls: [
        {
          name: "finish",
          arguments: line.predicted_answerable ? { answer: line.predicted_answer } : { answer: line.predicted_answer ?? "", answerable: false },
        },
      ],
    };
    const agent = createScriptedAgent("replay", ({ turn }) =>
      turn === 1 && titles.length > 0 ? { calls: titles.map((title) => ({ name: "read", arguments: { title } })) } : finish,
    );
    const trajectory = await runEpisode({ env: musiqueEnvironment, split: "dev", seed: 0, index, config, agent });
    assert.equal(trajectory.diagnostics.example_id, line.id);
    // The results.jsonl record a run writes, folded into the run's totals as `toolgym eval` does.
    const record = resultFromTrajectory({ trajectory, promptLength: 2, startedAt: "", durationMs: 0 });
    totals.add(digestOf(record));
    episodes.push({ metrics: record.metrics, diagnostics: trajectory.diagnostics });
    exported.push({ exampleId: index, trajectory: trajectory as unknown as JsonValue, metrics: record.metrics });
  }
  const means = totals.summary(
    { dir: "", runId: "", env: "musique", benchmark: "musique", model: "replay", total: predictions.length, resumedFrom: 0 },
    "complete",
  ).metrics;
  const summarize = musiqueEnvironment.summary?.summarize as (episodes: SummaryEpisode[]) => BenchmarkSummary;
  // Episodes arrive in any order from a parallel run; the summary sorts them back into file order.
  return { means, official: summarize([...episodes].reverse()), exported: exported.reverse() };
}

describe("MuSiQue-Full run summary", () => {
  for (const variant of ["mixed", "flip_third", "all_answerable"]) {
    it(`${variant}: f1/em means equal the official answer_f1/answer_em; answerable_correct is the share of right verdicts`, async () => {
      const predictions = readPredictions(`pred_${variant}.jsonl`);
      const summary = (await replayRun(predictions)).means;
      const official = expected.variants[variant]?.unrounded_diagnostic as Record<string, number>;
      assert.ok(Math.abs((summary.f1 as number) - (official.answer_f1 as number)) < 1e-12, `${summary.f1} vs ${official.answer_f1}`);
      assert.ok(Math.abs((summary.em as number) - (official.answer_em as number)) < 1e-12);
      // The environment reads the answer text "unanswerable" as abstaining (about.md), so a line that says
      // "unanswerable" with predicted_answerable true (pred_mixed line 22) is an abstention here.
      const verdict = (line: PredictionLine) => line.predicted_answerable && line.predicted_answer !== "unanswerable";
      const right = predictions.filter((line, position) => verdict(line) === goldAnswerable[position]).length;
      assert.equal(summary.answerable_correct, right / predictions.length);
      assert.ok(summary.answer_sufficiency_f1 !== undefined);
    });
  }
});

describe("MuSiQue-Full: the environment's own summary of a run is what evaluate_v1.0.py prints for it", () => {
  // The agent's predicted support is the paragraphs it read, and read returns every paragraph sharing a
  // title, so support metrics are checked against the scorer on the run's exported prediction file.
  // pred_mixed line 22 says "unanswerable" with predicted_answerable true, which the environment reads as
  // abstaining, so its group metrics differ from the file's.
  for (const variant of ["perfect", "all_answerable", "all_unanswerable", "flip_third", "support_empty", "support_superset", "random", "mixed"]) {
    it(`${variant}: answer metrics equal the official output on pred_${variant}.jsonl; all five equal the scorer on the run's predictions`, async () => {
      const { official, exported } = await replayRun(readPredictions(`pred_${variant}.jsonl`));
      const printed = expected.variants[variant]?.metrics as Record<string, number>;
      const answerKeys = variant === "mixed" ? ["answer_f1", "answer_em"] : ["answer_f1", "answer_em", "group_answer_sufficiency_f1"];
      for (const key of answerKeys) assert.equal(official[key], printed[key], `${variant} ${key}`);
      // The run's predictions as `toolgym export RUN --format musique` writes them.
      const file = join(directory, `run_${variant}.jsonl`);
      writeFileSync(file, (musiqueEnvironment.exports?.musique as RunExporter).write(exported));
      const scored = metricValues(scoreMusiqueFiles({ goldFile: GOLD, predictionFile: file }));
      assert.deepEqual(Object.keys(scored).length, 5);
      for (const [key, value] of Object.entries(scored)) assert.equal(official[key], value, `${variant} ${key}`);
      assert.equal(official.answerable, 20);
      assert.equal(official.ids, 20);
      assert.equal(official.unpaired_ids, 0);
    });
  }

  it("a run that covers only one twin of an id leaves that id out of the group metrics and says so", async () => {
    const { official } = await replayRun(readPredictions("pred_perfect.jsonl").slice(0, 3));
    assert.equal(official.ids, 1);
    assert.equal(official.unpaired_ids, 1);
    assert.match(official.text, /1 ids without both lines/);
  });
});

describe("MuSiQue-Full: the oracle", () => {
  it("answers the answerable questions and abstains on their twins: reward 1 on all 40 lines, in the tool and text modes", async () => {
    const oracle = multihopPolicies.find((policy) => policy.id === "oracle") as (typeof multihopPolicies)[number];
    for (const mode of ["search", "context"]) {
      const config = musiqueEnvironment.configSchema.parse({ mode, file: GOLD });
      for (let index = 0; index < goldAnswerable.length; index++) {
        const agent = oracle.create({ task: task(index, mode), random: createRandom("oracle", index) });
        const trajectory = await runEpisode({ env: musiqueEnvironment, split: "dev", seed: 0, index, config, agent });
        assert.equal(trajectory.reward?.total, 1, `${mode} ${index}`);
        assert.equal(trajectory.diagnostics.predicted_answerable, goldAnswerable[index]);
      }
    }
  });
});
