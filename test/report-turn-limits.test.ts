import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { buildReport, loadInputs, renderCard, renderHtml } from "../src/eval/report/index.ts";
import { modelGeneration, writeSyntheticRun } from "./report-support.ts";

// The metadata records the first task's limit (26); the episodes' own limits range over 24–92.
describe("report: the turn limit of tasks sized per plan", () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), "toolgym-turn-limits-"));
    const limits = [26, 24, 92, 40, 30];
    writeSyntheticRun({
      root: join(root, "varying"),
      benchmark: "plan",
      label: "base",
      metrics: ["reward"],
      generation: modelGeneration({ maxTurns: 26 }),
      episodes: limits.map((maxTurns, index) => ({ metrics: { reward: index % 2 }, maxTurns })),
    });
    writeSyntheticRun({
      root: join(root, "fixed"),
      benchmark: "qa",
      label: "base",
      metrics: ["reward"],
      generation: modelGeneration({ maxTurns: 16 }),
      episodes: [0, 1, 1].map((reward) => ({ metrics: { reward }, maxTurns: 16 })),
    });
    writeSyntheticRun({
      root: join(root, "unrecorded"),
      benchmark: "old",
      label: "base",
      metrics: ["reward"],
      generation: modelGeneration({ maxTurns: 12 }),
      episodes: [0, 1].map((reward) => ({ metrics: { reward } })),
    });
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("the card shows the range of per-task limits, not the first task's", () => {
    const card = renderCard(buildReport(loadInputs([join(root, "varying")])));
    const line = card.split("\n").find((text) => text.startsWith("| plan | plan |"));
    assert.ok(line, card);
    assert.match(line, /\| per task: 24–92 \|/);
    assert.doesNotMatch(line, /\| 26 \|/);
  });

  it("one number when every task has the same limit; the metadata's when trajectories lack it", () => {
    const card = renderCard(buildReport(loadInputs([join(root, "fixed"), join(root, "unrecorded")])));
    assert.match(card.split("\n").find((text) => text.startsWith("| qa | qa |")) ?? "", /\| 16 \|/);
    assert.match(card.split("\n").find((text) => text.startsWith("| old | old |")) ?? "", /\| 12 \|/);
  });

  it("the HTML settings table shows the same range", () => {
    const html = renderHtml(buildReport(loadInputs([join(root, "varying")])));
    assert.match(html, /<td>per task: 24–92<\/td>/);
  });
});
