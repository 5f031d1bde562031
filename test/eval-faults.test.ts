import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { getEnvironment } from "../src/envs/registry.ts";
import { ProviderError, parseConfig, type Agent, type Message } from "../src/core/index.ts";
import { createReport } from "../src/eval/report/index.ts";
import { runEpisode } from "../src/rollout/run-episode.ts";
import { memoryStream } from "../src/cli/io.ts";
import { runEvaluation } from "../src/eval/run-evaluation.ts";
import { MODEL_FAULTS, TRANSPORT_FAULTS, mockOracleResponder, startFaultServer, type ChatRequestBody, type FaultServer } from "../src/testing/fault-server.ts";
import { startAnsweringServer, toolReply, type Answer } from "../src/testing/answering-server.ts";

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
  // A hung server fails the call after two time-outs (not after every retry waited the time-out: issue 37).
  for (const client of ["undici", "openai"] as const)
    it(`retries a request the server never answers once, counts each time-out, and gives up after two (${client})`, async () => {
      const n = 4;
      const server = await startFaultServer({ respond: mockOracleResponder, faultRate: 1, faults: ["timeout"] });
      try {
        const progress = memoryStream();
        const { summary, results, metadata } = await evaluate(server, client, n, 200, progress);
        // The progress line counts the failed attempts (on this thread, or reported by the worker threads).
        assert.match(progress.text(), new RegExp(`${n}/${n} .* errors ${n} {2}retries ${2 * n}$`, "m"));
        assert.equal(summary.errored, n);
        for (const result of results) {
          assert.equal(result.status, "errored");
          assert.equal(result.error.code, "PROVIDER_RETRIES_EXHAUSTED");
          assert.match(result.error.message, /after 2 attempts \(2 timed out\); last error: timeout talking to /);
        }
        assert.deepEqual(
          { requests: metadata.provider.requests, failedAttempts: metadata.provider.failedAttempts, byReason: metadata.provider.failuresByReason },
          { requests: 2 * n, failedAttempts: 2 * n, byReason: { PROVIDER_TIMEOUT: 2 * n } },
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
  async function evaluate(server: FaultServer, client: "undici" | "openai", n: number, timeoutMs?: number, progress?: ReturnType<typeof memoryStream>) {
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
      ...(progress ? { progress, workers: client === "openai" ? 2 : 1 } : { quiet: true }),
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

/** The key of the mock task a request is about; tasks whose key has an even first character code ramble. */
function rambles(body: ChatRequestBody): boolean {
  const question = (body.messages as Message[]).find((message) => message.role === "user")?.content ?? "";
  const key = /key '([^']+)'/.exec(question)?.[1] ?? "";
  return key.charCodeAt(0) % 2 === 0;
}

const OVERFLOW = JSON.stringify({
  object: "error",
  message: "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion).",
  type: "BadRequestError",
  code: 400,
});

describe("eval: errored means the infrastructure failed, nothing else (issue 37)", () => {
  let out: string;
  before(() => {
    out = mkdtempSync(join(tmpdir(), "toolgym-eval-honest-"));
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  async function evaluateWith(url: string, options: { n: number; maxTurns?: number; client?: "undici" | "openai"; timeoutMs?: number; env?: string }) {
    const env = getEnvironment(options.env ?? "mock");
    const [summary] = await runEvaluation({
      rows: [
        {
          env,
          config: parseConfig(env.id, env.configSchema, "{}"),
          split: env.defaultSplit,
          seed: 0,
          n: options.n,
          ...(options.maxTurns ? { maxTurns: options.maxTurns } : {}),
        },
      ],
      models: [
        {
          kind: "openai",
          label: "m",
          name: "scripted",
          baseUrls: [url],
          maxRetries: 6,
          backoffMs: 1,
          client: options.client ?? "undici",
          ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
        },
      ],
      out: mkdtempSync(join(out, "run-")),
      quiet: true,
    });
    assert.ok(summary);
    const results = readFileSync(join(summary.dir, "results.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    return { summary, results };
  }

  it("a context overflow (HTTP 400 'maximum context length') ends the episode as prompt_too_long, scored: the same policy scores what the turn limit gives it, and the card says why", async () => {
    const n = 12;
    // A rambling task keeps looking up a wrong key; past 6 messages its server refuses the prompt as too long.
    const answer = (body: ChatRequestBody): Answer => {
      if (!rambles(body)) return { status: 200, body: toolReply(mockOracleResponder(body)) };
      if ((body.messages as Message[]).length > 6) return { status: 400, body: OVERFLOW };
      return { status: 200, body: toolReply({ toolCalls: [{ name: "lookup", arguments: { key: "nope" } }] }) };
    };
    const server = await startAnsweringServer(answer);
    try {
      const overflowed = await evaluateWith(server.url, { n });
      const limited = await evaluateWith(server.url, { n, maxTurns: 2 });
      const rambling = overflowed.results.filter((result) => result.termination === "prompt_too_long");
      assert.ok(rambling.length > 0 && rambling.length < n, `some tasks ramble (${rambling.length} of ${n})`);
      assert.equal(overflowed.summary.errored, 0);
      assert.equal(overflowed.summary.scored, n);
      for (const result of rambling) {
        assert.equal(result.status, "scored");
        assert.equal(result.reward, 0);
        assert.equal(result.info.trajectory.errors[0].code, "MODEL_CONTEXT_OVERFLOW");
      }
      assert.equal(overflowed.summary.terminations.prompt_too_long, rambling.length);
      assert.equal(overflowed.summary.mean, (n - rambling.length) / n);
      assert.equal(overflowed.summary.mean, limited.summary.mean, "the turn limit and the context overflow give the same score");
      const card = createReport([overflowed.summary.dir], { card: true }).text;
      assert.match(card, new RegExp(`${rambling.length} episodes ended as prompt_too_long \\(the model's failure, scored\\)`));
    } finally {
      await server.close();
    }
  });

  it("a content filter (HTTP 400 or finish_reason content_filter) is the model's failure; a 5xx after retries is errored", async () => {
    let calls = 0;
    const server = await startAnsweringServer((body) => {
      calls++;
      const key = rambles(body);
      if (key)
        return {
          status: 400,
          body: JSON.stringify({
            error: { message: "The response was filtered due to the prompt triggering the content management policy.", code: "content_filter" },
          }),
        };
      return { status: 200, body: toolReply(mockOracleResponder(body)).replace('"finish_reason":"tool_calls"', '"finish_reason":"content_filter"') };
    });
    try {
      const { summary, results } = await evaluateWith(server.url, { n: 6 });
      assert.equal(summary.errored, 0);
      assert.equal(summary.terminations.content_filter, 6);
      assert.deepEqual(new Set(results.map((result) => result.info.trajectory.errors[0].code)), new Set(["MODEL_CONTENT_FILTER"]));
      assert.equal(calls, 6, "a model failure is not retried");
    } finally {
      await server.close();
    }
    const failing = await startAnsweringServer(() => ({ status: 503, body: '{"error": {"message": "overloaded"}}' }));
    try {
      const { summary, results } = await evaluateWith(failing.url, { n: 2 });
      assert.equal(summary.errored, 2);
      assert.equal(results[0].error.code, "PROVIDER_RETRIES_EXHAUSTED");
    } finally {
      await failing.close();
    }
  });

  for (const client of ["undici", "openai"] as const)
    it(`a reply over the size cap (5 MB, default cap 4 MiB) ends the episode as reply_too_large, scored, with nothing of it kept (${client})`, async () => {
      const padding = "x".repeat(5 * 1024 * 1024);
      const server = await startAnsweringServer((body) => ({ status: 200, body: toolReply(mockOracleResponder(body), { padding }) }));
      try {
        const { summary, results } = await evaluateWith(server.url, { n: 2, client });
        assert.equal(summary.errored, 0);
        assert.equal(summary.terminations.reply_too_large, 2);
        assert.equal(results[0].info.trajectory.errors[0].code, "MODEL_REPLY_TOO_LARGE");
        assert.ok(statSync(join(summary.dir, "results.jsonl")).size < 100_000, "the reply is not written");
      } finally {
        await server.close();
      }
    });

  it("τ²-bench keeps tau2's rule: its definitions record a model failure as errored, and the rollout honours it", async () => {
    assert.equal(getEnvironment("tau2_retail").modelFailures, "errored");
    assert.equal(getEnvironment("mock").modelFailures, undefined);
    const mock = getEnvironment("mock");
    const failing: Agent = {
      id: "overflow",
      act: async () => {
        throw new ProviderError({ code: "MODEL_CONTEXT_OVERFLOW", message: "too long", retryable: false, modelFailure: "prompt_too_long" });
      },
    };
    const base = { split: "eval", seed: 0, index: 0, config: parseConfig("mock", mock.configSchema, "{}"), agent: failing };
    assert.equal((await runEpisode({ ...base, env: mock })).termination, "prompt_too_long");
    const strict = await runEpisode({ ...base, env: { ...mock, modelFailures: "errored" } });
    assert.equal(strict.termination, "errored");
    assert.equal(strict.reward, null);
  });
});
