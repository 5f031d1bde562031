import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { writeEvidence } from "../src/pipeline/card.ts";
import { parsePipelineConfig, type PipelineConfig } from "../src/pipeline/config.ts";
import { EVIDENCE_DIR, unpackEvidence } from "../src/pipeline/pack.ts";
import { buildSummary } from "../src/pipeline/summary.ts";

/**
 * The committed tiny evidence run (docs/results/tiny), recomputed from its own files: the evidence pack holds
 * every evaluation's episodes and every stage's log, and the card stage over them renders the shipped card,
 * plot and summary again. Its numbers are real (non-zero, varied), so the checks that shared starting points
 * are equal would fail on a point seeded per arm.
 */
const ROOT = resolve(import.meta.dirname, "..");
const RESULTS = join(ROOT, "docs", "results", "tiny");
const work = mkdtempSync(join(tmpdir(), "toolgym-pipeline-results-"));
after(() => rmSync(work, { recursive: true, force: true }));
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const out = join(work, "run");
let config: PipelineConfig;
const shipped = (file: string) => readFileSync(join(RESULTS, file), "utf8");

before(() => {
  unpackEvidence(join(RESULTS, EVIDENCE_DIR), out);
  config = parsePipelineConfig(JSON.parse(readFileSync(join(out, "pipeline.json"), "utf8")), "pipeline.json");
  writeEvidence(config, out);
});

describe("docs/results/tiny, recomputed from its evidence files", () => {
  it("the card stage over the unpacked files renders the shipped card and plot byte for byte", () => {
    assert.equal(readFileSync(join(out, "card.md"), "utf8"), shipped("card.md"));
    assert.equal(readFileSync(join(out, "curves.svg"), "utf8"), shipped("curves.svg"));
    assert.equal(readFileSync(join(out, "watch.svg"), "utf8"), shipped("watch.svg"));
  });

  it("summary.json: its numbers come from the files, its stage times from each stage's done marker", () => {
    const summary = JSON.parse(shipped("summary.json")) as Json;
    assert.deepEqual(JSON.parse(JSON.stringify(buildSummary({ config, out, stages: summary.stages }))), summary);
    for (const stage of summary.stages.filter((entry: Json) => entry.name !== "card"))
      assert.equal((JSON.parse(readFileSync(join(out, stage.name, "done.json"), "utf8")) as Json).seconds, stage.seconds, stage.name);
    assert.deepEqual(summary.eval_seeds, { dev: 0, test: 1 });
  });

  it("arms that start from the same model share their step-0 point; GRPO from the baseline starts at the baseline's", () => {
    const summary = JSON.parse(shipped("summary.json")) as Json;
    const arm = (name: string) => summary.arms.find((entry: Json) => entry.name === name);
    const start = arm("grpo-s0").curve[0];
    assert.ok(start.step === 0 && start.mean > 0 && start.ci_high > start.ci_low, JSON.stringify(start));
    for (const name of ["grpo-s1", "shuffled"]) {
      assert.equal(arm(name).init, "pre");
      assert.deepEqual(arm(name).curve[0], start, name);
    }
    assert.equal(arm("grpo-from-filtered").init, "filtered-sft");
    assert.notDeepEqual(arm("grpo-from-filtered").curve[0], start, "another model, another point");
  });

  it("the reward-hacking watch flags the exploit arm and no real arm (issue 39), as recomputed from the watch logs", () => {
    const summary = JSON.parse(shipped("summary.json")) as Json;
    const flagged = summary.arms.filter((entry: Json) => entry.flagged).map((entry: Json) => entry.name);
    assert.deepEqual(flagged, ["exploit"]);
    const exploit = summary.arms.find((entry: Json) => entry.name === "exploit");
    assert.ok(exploit.flagged_by.includes("reward without outcome"), exploit.flagged_by.join(", "));
    for (const entry of summary.arms.filter((arm: Json) => arm.kind === "grpo" || arm.kind === "control"))
      assert.ok(entry.watch.length > 0, `${entry.name} was watched`);
  });
});
