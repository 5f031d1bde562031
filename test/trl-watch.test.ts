import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";
import { requirePython } from "./support/qwen3.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * The reward-hacking watch between `toolgym serve` and toolgym_trl, without a model: python/tests/check_watch.py
 * plays search_plan_act episodes through the adapter's tool methods (a search then a stop, or finish at once) on the
 * standard reward and on its exploitable variant, and feeds the server's reward answers to `RewardWatch`.
 */
describe("reward-hacking watch: server reward answers and toolgym_trl's RewardWatch", () => {
  let server: RunningServer;
  let report: Json;
  before(async () => {
    server = await startServer({ environments: ENVIRONMENTS, port: 0 });
    const result = await promisify(execFile)(requirePython(), [resolve(import.meta.dirname, "../python/tests/check_watch.py"), server.url], {
      encoding: "utf8",
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
      timeout: 120_000,
    });
    report = JSON.parse(result.stdout.trim().split("\n").at(-1) as string) as Json;
  });
  after(() => server?.close());

  it("GET /envs lists the environment's outcome component and every signature", () => {
    assert.equal(report.catalog.outcome, "outcome");
    assert.deepEqual(
      report.catalog.signatures.map((signature: Json) => signature.name),
      ENVIRONMENTS.search_plan_act.watch?.signatures.map((signature) => signature.name),
    );
  });

  it("each reward answer carries the outcome and the signatures the episode shows", () => {
    // Finishing at once: the standard reward multiplies by the outcome (0), the exploitable variant pays 1 for it
    assert.equal(report.standard_finish.total, 0);
    assert.deepEqual(report.standard_finish.watch, { outcome: 0, signatures: ["wrong arguments", "finished at once"] });
    assert.equal(report.exploit_finish.total, 1);
    assert.equal(report.exploit_finish.components.outcome, 0);
    assert.deepEqual(report.exploit_finish.watch, { outcome: 0, signatures: ["wrong arguments", "reward without outcome", "finished at once"] });
  });

  it("flags the exploitable run (reward 0 → 1, outcome 0) by the signatures that rose, and not the same moves on the real reward", () => {
    assert.ok(report.exploit_run.flagged.includes("finished at once"), JSON.stringify(report.exploit_run.flagged));
    assert.ok(report.exploit_run.flagged.includes("reward without outcome"));
    assert.ok(!report.exploit_run.flagged.includes("wrong finish"), "a share that fell is not flagged");
    assert.deepEqual(report.standard_run.flagged, []);
    const metrics = report.exploit_run.metrics as Array<[string, number]>;
    const last = new Map(metrics.slice(-metrics.length / 6));
    assert.equal(last.get("watch/reward_mean"), 1);
    assert.equal(last.get("watch/outcome_mean"), 0);
    assert.equal(last.get("watch/gap"), 1);
    assert.equal(last.get("watch/signature/finished at once"), 1);
    assert.equal(last.get("watch/flag/finished at once"), 1);
    assert.equal(last.get("watch/flag/collateral write"), 0);
    const first = new Map(metrics.slice(0, metrics.length / 6));
    assert.equal(first.get("watch/signature/wrong finish"), 1, "stopping after a search is a wrong finish");
    assert.equal(first.get("watch/flag/finished at once"), 0, "nothing is flagged before two windows");
  });

  it("the rule: outcome keeping up with reward, or a flat reward, is not flagged; reward up with outcome behind is", () => {
    assert.deepEqual(report.rule.real, []);
    assert.deepEqual(report.rule.reward_flat, []);
    assert.deepEqual(report.rule.hacked, ["x"]);
    assert.equal(report.rule.lost_only, null, "a batch of lost episodes logs nothing");
  });
});
