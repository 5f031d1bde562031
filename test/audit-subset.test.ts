// Issue 37, item 10: `audit --policies` judges only what ran. Which criteria a subset leaves unjudged is decided
// by the failure's code (POLICY_NOT_RUN), not by matching its sentence: a criterion that ran and failed stays a
// failure whatever its wording.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { auditPolicies, runAudit } from "../src/audit/run-audit.ts";
import { parseConfig, type AuditFailure, type AuditSpec } from "../src/core/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { runCli } from "./support/run-cli.ts";

const env = getEnvironment("mock");
const spec = env.audit as AuditSpec;

/** The mock audit with an acceptance that returns the given failures whatever ran. */
const withAcceptance = (failures: AuditFailure[]): AuditSpec => ({ ...spec, acceptance: () => failures });

describe("audit of a subset of policies", () => {
  it("adds the oracle as the reference, and says so", () => {
    assert.deepEqual(auditPolicies("mock", spec, ["reckless_guess"]), { policies: ["oracle", "reckless_guess"], added: "oracle" });
    assert.deepEqual(auditPolicies("mock", spec, ["oracle"]), { policies: ["oracle"] });
    assert.deepEqual(auditPolicies("mock", spec, undefined), { policies: undefined });
  });

  it("leaves POLICY_NOT_RUN criteria unjudged by code; a CRITERION_FAILED worded like one still fails", async () => {
    const notRun: AuditFailure = { code: "POLICY_NOT_RUN", message: "the ceiling policy is missing", policy: "ceiling" };
    const lookalike: AuditFailure = { code: "CRITERION_FAILED", message: "pilot 'reckless_guess' did not run" };
    const base = { env, n: 4, seed: 0, config: parseConfig(env.id, env.configSchema, "{}") };
    const subset = await runAudit({ ...base, spec: withAcceptance([notRun]), policies: ["oracle"] });
    assert.deepEqual(subset.failures, []);
    assert.deepEqual(subset.notChecked, ["the ceiling policy is missing"]);
    assert.equal(subset.verdict, "pass");
    const failed = await runAudit({ ...base, spec: withAcceptance([notRun, lookalike]), policies: ["oracle"] });
    assert.deepEqual(failed.failures, ["pilot 'reckless_guess' did not run"]);
    assert.equal(failed.verdict, "fail");
    // Every policy run: a policy the criteria name that did not run is a failure of the audit itself.
    const whole = await runAudit({ ...base, spec: withAcceptance([notRun]) });
    assert.deepEqual(whole.failures, ["the ceiling policy is missing"]);
    assert.deepEqual(whole.notChecked, []);
  });

  it("the CLI: --policies oracle passes, listing the pilot criteria it did not check (table and --json)", async () => {
    const table = await runCli(["audit", "mock", "--policies", "oracle", "--n", "8"]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /verdict: PASS/);
    assert.match(table.stdout, /^not checked \(left out by --policies\): pilot 'reckless_guess' did not run$/m);
    const json = await runCli(["audit", "mock", "--policies", "oracle", "--n", "8", "--json"]);
    assert.equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as { verdict: string; failures: string[]; not_checked: string[] };
    assert.deepEqual([parsed.verdict, parsed.failures, parsed.not_checked], ["pass", [], ["pilot 'reckless_guess' did not run"]]);
  });
});
