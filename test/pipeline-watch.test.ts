import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { EVIDENCE_FILE } from "../src/pipeline/card.ts";
import { presetConfig } from "../src/pipeline/presets.ts";
import { buildSummary } from "../src/pipeline/summary.ts";
import { readWatch, watchChart, watchMarkdown } from "../src/pipeline/watch.ts";

/**
 * summary.json and the card read the reward-hacking watch back from each arm's step logs (TRL's logged metrics as
 * python/train_grpo.py prints them); the logs here are written by hand in that shape, the Python side that writes
 * them is checked in test/trl-grpo-e2e.test.ts and test/trl-watch.test.ts.
 */
const work = mkdtempSync(join(tmpdir(), "toolgym-pipeline-watch-"));
after(() => rmSync(work, { recursive: true, force: true }));

/** One TRL step log with the watch's metrics; `flag` names the signatures flagged at that step. */
function stepLog(step: number, reward: number, outcome: number, once: number, flag: string[] = []): Record<string, number> {
  return {
    step,
    reward,
    loss: 0,
    "watch/reward_mean": reward,
    "watch/outcome_mean": outcome,
    "watch/gap": reward - outcome,
    "watch/signature/finished at once": once,
    "watch/signature/wrong finish": 0.25,
    "watch/flag/finished at once": flag.includes("finished at once") ? 1 : 0,
    "watch/flag/wrong finish": 0,
  };
}

function writeSteps(out: string, arm: string, logs: Array<Record<string, number>>): void {
  mkdirSync(join(out, "grpo", arm), { recursive: true });
  writeFileSync(join(out, "grpo", arm, "steps.jsonl"), logs.map((log) => `${JSON.stringify(log)}\n`).join(""));
}

describe("the reward-hacking watch in summary.json and the card", () => {
  const real = [stepLog(1, 0.5, 0.5, 0), stepLog(2, 0.7, 0.7, 0), stepLog(3, 0.9, 0.9, 0)];
  const exploit = [stepLog(1, 0.5, 0.5, 0), stepLog(2, 0.8, 0.3, 0.6), stepLog(3, 0.95, 0.05, 0.9, ["finished at once"])];

  it("reads each step's reward, outcome and signature shares, and whether any step flagged a signature", () => {
    const flagged = readWatch(exploit);
    assert.deepEqual(flagged.watch[2], { step: 3, reward_mean: 0.95, outcome_mean: 0.05, signatures: { "finished at once": 0.9, "wrong finish": 0.25 } });
    assert.equal(flagged.flagged, true);
    assert.deepEqual(flagged.flagged_by, ["finished at once"]);
    const clean = readWatch(real);
    assert.equal(clean.flagged, false);
    assert.deepEqual(clean.flagged_by, []);
    assert.deepEqual(
      clean.watch.map((point) => point.reward_mean),
      [0.5, 0.7, 0.9],
    );
    // Step logs of a run without the watch (written before it existed) give no points, and no flag
    assert.deepEqual(readWatch([{ step: 1, reward: 0.4 }]), { watch: [], flagged: false, flagged_by: [] });
  });

  it("summary.json arms gain watch and flagged; the baseline has no training steps to watch", () => {
    const out = join(work, "summary");
    writeSteps(out, "grpo-s0", real);
    writeSteps(out, "exploit", exploit);
    const arm = (name: string, kind: string) => ({ name, kind, seed: 0, transform: null, curve: [], comparisons: [] });
    mkdirSync(join(out, "card"), { recursive: true });
    const evidence = { arms: [arm("grpo-s0", "grpo"), arm("exploit", "exploit"), arm("filtered-sft", "baseline")], failures: [], sampled: [] };
    writeFileSync(join(out, EVIDENCE_FILE), JSON.stringify(evidence));
    const summary = buildSummary({ config: presetConfig("tiny"), out, stages: [] });
    const byName = new Map(summary.arms.map((entry) => [entry.name, entry]));
    assert.equal(byName.get("grpo-s0")?.flagged, false);
    assert.equal(byName.get("grpo-s0")?.watch.length, 3);
    assert.equal(byName.get("exploit")?.flagged, true);
    assert.equal(byName.get("exploit")?.kind, "exploit");
    assert.deepEqual(byName.get("exploit")?.flagged_by, ["finished at once"]);
    assert.deepEqual(byName.get("exploit")?.watch[1], {
      step: 2,
      reward_mean: 0.8,
      outcome_mean: 0.3,
      signatures: { "finished at once": 0.6, "wrong finish": 0.25 },
    });
    assert.deepEqual(byName.get("filtered-sft")?.watch, []);
    assert.equal(byName.get("filtered-sft")?.flagged, false);
    // The top-level grpo block still describes the first arm on the environment's own reward, never the exploit arm
    assert.equal(summary.grpo?.reward_last, 0.9);
  });

  it("the card's chart has a reward panel, an outcome panel and one per signature, one line per arm; its table names the flag", () => {
    const arms = [
      { name: "grpo-s0", kind: "grpo" as const, ...readWatch(real) },
      { name: "exploit", kind: "exploit" as const, ...readWatch(exploit) },
    ];
    const svg = watchChart(arms) ?? "";
    assert.equal((svg.match(/<g transform=/g) ?? []).length, 4, "reward, outcome, two signatures");
    for (const title of ["training mean reward", "training mean outcome", "share of episodes: finished at once", "share of episodes: wrong finish"])
      assert.ok(svg.includes(`>${title}</text>`), title);
    assert.equal((svg.match(/data-arm="exploit"/g) ?? []).length, 4, "the exploit arm's line in every panel");
    assert.equal((svg.match(/data-arm="grpo-s0"/g) ?? []).length, 4);
    assert.ok(svg.includes("exploit (exploit) flagged"));
    const table = watchMarkdown(arms);
    assert.match(table, /\| exploit \(exploit\) \| 3 \| .* \| \*\*yes\*\*: finished at once \|/);
    assert.match(table, /\| grpo-s0 \(grpo\) \| 3 \| 0\.700 → 0\.700 \| 0\.700 → 0\.700 \| 0\.000 \| no \|/);
    assert.equal(watchChart([{ name: "pre", kind: "grpo", watch: [], flagged: false, flagged_by: [] }]), undefined, "no chart without watched steps");
  });
});
