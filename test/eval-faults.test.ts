import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { getEnvironment } from "../src/envs/registry.ts";
import { parseConfig } from "../src/core/index.ts";
import { runEvaluation } from "../src/eval/run-evaluation.ts";
import { MODEL_FAULTS, TRANSPORT_FAULTS, mockOracleResponder, startFaultServer, type FaultServer } from "../src/testing/fault-server.ts";

/** Which format-error kind each injected model fault must produce (one each). */
const EXPECTED_KIND: Record<(typeof MODEL_FAULTS)[number], string> = {
  truncated: "truncated",
  invalid_arguments: "invalid_json_arguments",
  unparsed_tool_call: "unparsed_tool_call",
  hermes_in_content: "unparsed_tool_call",
  empty: "empty_response",
  unknown_tool: "unknown_tool",
  no_tool_call: "no_tool_call",
};

/** The transport faults the server delivers at once (a `timeout` fault is never answered). */
const ANSWERED_TRANSPORT_FAULTS = TRANSPORT_FAULTS.filter((fault) => fault !== "timeout");

describe("eval harness under injected faults", () => {
  let out: string;
  before(() => {
    out = mkdtempSync(join(tmpdir(), "toolgym-eval-faults-"));
  });
  after(() => {
    if (!process.env.KEEP) rmSync(out, { recursive: true, force: true });
    else console.log(out);
  });

  it("completes 500 episodes with 20% of requests failing in assorted ways; every episode is scored or errored with its reason and the counts reconcile", async () => {
    await runFaultedEvaluation("undici", 500);
  });

  it("reconciles the same way through the official openai npm client (--http-client openai)", async () => {
    await runFaultedEvaluation("openai", 150);
  });

  // A request the server never answers, on its own: with no answer to race the client's timer, every attempt
  // times out however slowly this process is scheduled, so the short time-out cannot misfire on a loaded machine.
  for (const client of ["undici", "openai"] as const)
    it(`retries a request the server never answers and counts each time-out (${client})`, async () => {
      const n = 4;
      const server = await startFaultServer({ respond: mockOracleResponder, faultRate: 1, faults: ["timeout"] });
      try {
        const { summary, results, metadata } = await evaluate(server, client, n, 200);
        assert.equal(summary.errored, n);
        for (const result of results) {
          assert.equal(result.status, "errored");
          assert.equal(result.error.code, "PROVIDER_RETRIES_EXHAUSTED");
          assert.match(result.error.message, /after 3 attempts; last error: timeout talking to /);
        }
        assert.deepEqual(
          { requests: metadata.provider.requests, failedAttempts: metadata.provider.failedAttempts, byReason: metadata.provider.failuresByReason },
          { requests: 3 * n, failedAttempts: 3 * n, byReason: { PROVIDER_TIMEOUT: 3 * n } },
        );
        await server.idle();
        assert.equal(server.counts.ok, 0, "nothing was answered");
      } finally {
        await server.close();
      }
    });

  /** A fresh fault server per run, so its counters reconcile with this run alone. */
  async function runFaultedEvaluation(client: "undici" | "openai", n: number): Promise<void> {
    // Every fault but `timeout` (the test above): each is delivered at once, and with no client time-out set
    // (the 10-minute default) no answer can lose a race with a timer, so the counts reconcile under any load.
    const faults = [...ANSWERED_TRANSPORT_FAULTS, ...MODEL_FAULTS];
    const server = await startFaultServer({ respond: mockOracleResponder, faultRate: 0.2, faults, seed: 7 });
    try {
      await checkFaultedEvaluation(server, client, n);
    } finally {
      await server.close();
    }
  }

  /** `n` mock episodes against `server` through `client`; `timeoutMs` undefined keeps the pool's default. */
  async function evaluate(server: FaultServer, client: "undici" | "openai", n: number, timeoutMs?: number) {
    const env = getEnvironment("mock");
    const runOut = mkdtempSync(join(out, `${client}-`));
    const [summary] = await runEvaluation({
      rows: [{ env, config: parseConfig("mock", env.configSchema, "{}"), split: "eval", seed: 0, n }],
      models: [
        {
          kind: "openai",
          label: "faulty",
          name: "scripted",
          baseUrls: [server.url],
          apiKey: "sk-secret-never-written",
          ...(timeoutMs !== undefined ? { timeoutMs } : {}),
          maxRetries: 2,
          backoffMs: 2,
          client,
        },
      ],
      out: runOut,
      concurrency: 64,
      quiet: true,
    });
    assert.ok(summary);
    const lines = readFileSync(join(summary.dir, "results.jsonl"), "utf8").trimEnd().split("\n");
    const results = lines.map((line) => JSON.parse(line));
    const metadata = JSON.parse(readFileSync(join(summary.dir, "metadata.json"), "utf8"));
    return { summary, lines, results, metadata };
  }

  async function checkFaultedEvaluation(server: FaultServer, client: "undici" | "openai", n: number): Promise<void> {
    const { summary, lines, results, metadata } = await evaluate(server, client, n);

    // Every episode exactly once, each scored (with a reward) or errored (with its reason, no reward).
    assert.equal(results.length, n);
    assert.equal(new Set(results.map((result) => result.id)).size, n);
    let errored = 0;
    for (const result of results) {
      if (result.status === "errored") {
        errored++;
        assert.equal(result.reward, null);
        assert.equal(result.error.code, "PROVIDER_RETRIES_EXHAUSTED");
        assert.match(result.error.message, /after 3 attempts; last error: /);
      } else {
        assert.equal(result.status, "scored");
        assert.equal(typeof result.reward, "number");
        assert.equal(result.error, null);
      }
      assert.equal(result.format_errors, result.info.trajectory.formatErrors.count);
    }
    assert.ok(errored > 0, "some episodes exhaust their retries at this fault rate");
    assert.ok(errored < n / 5);
    assert.equal(summary.errored, errored);
    assert.equal(summary.scored, n - errored);
    assert.deepEqual(metadata.counts, { scored: n - errored, errored });
    assert.equal(metadata.status, "complete");

    // Requests were well formed; every transport fault the server injected was seen (and retried) by the client.
    assert.equal(server.counts.invalid, 0);
    const transport = ANSWERED_TRANSPORT_FAULTS.reduce((sum, fault) => sum + (server.counts.byFault[fault] ?? 0), 0);
    for (const fault of ANSWERED_TRANSPORT_FAULTS) assert.ok((server.counts.byFault[fault] ?? 0) > 0, `fault ${fault} was injected`);
    assert.equal(metadata.provider.failedAttempts, transport, JSON.stringify({ server: server.counts, client: metadata.provider }));
    assert.equal(metadata.provider.requests, server.counts.requests);

    // Every injected model fault became exactly one counted format error of the right kind.
    const expected: Record<string, number> = {};
    for (const fault of MODEL_FAULTS) {
      assert.ok((server.counts.byFault[fault] ?? 0) > 0, `fault ${fault} was injected`);
      expected[EXPECTED_KIND[fault]] = (expected[EXPECTED_KIND[fault]] ?? 0) + (server.counts.byFault[fault] ?? 0);
    }
    const counted: Record<string, number> = {};
    for (const result of results) {
      for (const [kind, count] of Object.entries(result.info.trajectory.formatErrors.byKind as Record<string, number>))
        counted[kind] = (counted[kind] ?? 0) + count;
    }
    assert.deepEqual(counted, expected);
    assert.equal(
      summary.formatErrors,
      Object.values(expected).reduce((sum, count) => sum + count, 0),
    );

    // The API key never reaches a file.
    assert.ok(!readFileSync(join(summary.dir, "metadata.json"), "utf8").includes("sk-secret"));
    assert.ok(!lines.some((line) => line.includes("sk-secret")));
  }
});
