import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "./support/run-cli.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * A scripted NL judge (an OpenAI-compatible server): it reads the assertions from tau2's judge prompt and
 * answers each one met when its text has an even number of characters, so some tasks pass and some fail.
 */
function startJudge(): Promise<{ server: Server; url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => {
      response.setHeader("content-type", "application/json");
      if (request.method !== "POST") return response.end(JSON.stringify({ object: "list", data: [{ id: "judge", object: "model" }] }));
      requests++;
      const prompt = String((JSON.parse(body) as Json).messages.at(-1).content);
      const list = prompt.slice(prompt.indexOf("expectedOutcomes:"));
      const assertions = [...list.matchAll(/'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1] ?? match[2] ?? "");
      const results = assertions.map((text) => ({ expectedOutcome: text, reasoning: "scripted", metExpectation: text.length % 2 === 0 }));
      response.end(
        JSON.stringify({
          id: "judge",
          object: "chat.completion",
          model: "judge",
          choices: [{ index: 0, message: { role: "assistant", content: JSON.stringify({ results }) }, finish_reason: "stop" }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as { port: number };
      resolve({ server, url: `http://127.0.0.1:${address.port}/v1#judge`, requests: () => requests });
    }),
  );
}

const runIn = (root: string, label: string): string => {
  const parent = join(root, `tau2_retail--${label}`);
  return join(parent, readdirSync(parent)[0] as string);
};

const readResults = (directory: string): Json[] =>
  readFileSync(join(directory, "results.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Json);

const readJson = (path: string): Json => JSON.parse(readFileSync(path, "utf8")) as Json;

describe("toolgym rescore", () => {
  let judge: Awaited<ReturnType<typeof startJudge>>;
  let work: string;
  before(async () => {
    judge = await startJudge();
    work = mkdtempSync(join(tmpdir(), "toolgym-rescore-"));
  });
  after(() => {
    judge?.server.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("re-grades a judge-less retail run with a judge into the run that judge would have made, which report compares", { timeout: 300_000 }, async () => {
    const plain = join(work, "plain");
    const judged = join(work, "judged");
    const common = ["eval", "--env", "tau2_retail", "--split", "test", "--n", "12", "--quiet", "--workers", "1"];
    assert.equal((await runCli([...common, "--out", plain])).code, 0);
    const withJudge = await runCli([...common, "--out", judged, "--judge-model", judge.url]);
    assert.equal(withJudge.code, 0, withJudge.stderr);
    const original = runIn(plain, "scripted-oracle");
    assert.ok(
      readResults(original).some((row) => row.not_computed?.includes("NL_ASSERTION")),
      "some of these tasks have NL assertions",
    );

    const asked = judge.requests();
    const rescored = await runCli(["rescore", original, "--judge-model", judge.url]);
    assert.equal(rescored.code, 0, rescored.stderr);
    assert.ok(judge.requests() > asked, "the judge graded the recorded conversations");
    const directory = runIn(plain, "scripted-oracle.rescored");
    assert.match(rescored.stdout, new RegExp(`wrote ${directory.replace(/[.]/g, "\\.")}`));

    // Episode by episode, the same reward, components and pass as the run made with the judge.
    const reference = new Map(readResults(runIn(judged, "scripted-oracle")).map((row) => [row.id, row]));
    const rows = readResults(directory);
    assert.equal(rows.length, 12);
    let failedByJudge = 0;
    for (const row of rows) {
      const other = reference.get(row.id);
      assert.ok(other, row.id);
      assert.equal(row.reward, other.reward, row.id);
      assert.deepEqual(row.metrics, other.metrics, row.id);
      assert.equal(row.not_computed, undefined, row.id);
      if (row.metrics.NL_ASSERTION === 0) failedByJudge++;
    }
    assert.ok(failedByJudge > 0, "the scripted judge fails some assertions, so the rescore changes rewards");
    const summary = readJson(join(directory, "summary.json"));
    const judgedSummary = readJson(join(runIn(judged, "scripted-oracle"), "summary.json"));
    assert.equal(summary.mean, judgedSummary.mean);
    assert.deepEqual(summary.tau2.pass_hat, judgedSummary.tau2.pass_hat);
    assert.equal(summary.tau2.basis, judgedSummary.tau2.basis);
    const metadata = readJson(join(directory, "metadata.json"));
    assert.equal(metadata.status, "complete");
    assert.equal(metadata.rescore.from, readJson(join(original, "metadata.json")).runId);
    assert.equal(metadata.rescore.judgeModel, judge.url);

    const report = await runCli(["report", original, directory]);
    assert.equal(report.code, 0, report.stderr);
    assert.match(report.stdout, /scripted-oracle\.rescored − scripted-oracle/);
  });

  it("refuses to overwrite an earlier rescore without --resume, and --resume finishes one that stopped part way", { timeout: 120_000 }, async () => {
    const original = runIn(join(work, "plain"), "scripted-oracle");
    const directory = runIn(join(work, "plain"), "scripted-oracle.rescored");
    const again = await runCli(["rescore", original, "--judge-model", judge.url]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /RUN_EXISTS/);
    assert.equal(again.stderr.trim().split("\n").length, 1);
    const complete = readFileSync(join(directory, "results.jsonl"), "utf8").trim().split("\n");
    writeFileSync(join(directory, "results.jsonl"), `${complete.slice(0, 5).join("\n")}\n`);
    const resumed = await runCli(["rescore", original, "--judge-model", judge.url, "--resume"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(
      readResults(directory).map((row) => [row.id, row.reward]),
      complete.map((line) => JSON.parse(line) as Json).map((row) => [row.id, row.reward]),
    );
  });

  it("checks its options before writing anything: a judge for an environment without one, a bad address, a missing run", async () => {
    const mockRuns = join(work, "mock");
    assert.equal((await runCli(["eval", "--env", "mock", "--n", "4", "--out", mockRuns, "--quiet"])).code, 0);
    const parent = join(mockRuns, readdirSync(mockRuns)[0] as string);
    const run = join(parent, readdirSync(parent)[0] as string);
    for (const [args, code] of [
      [["rescore", run, "--judge-model", judge.url], /OPTION_UNSUPPORTED/],
      [["rescore", run, "--judge-model", "judge"], /OPTION_INVALID/],
      [["rescore", join(work, "nowhere")], /FILE_NOT_FOUND|RUN_NOT_FOUND/],
    ] as const) {
      const result = await runCli([...args]);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, code);
      assert.equal(result.stderr.trim().split("\n").length, 1);
    }
    assert.deepEqual(readdirSync(mockRuns).sort(), [readdirSync(mockRuns)[0]], "no run was started");
    // An environment without a rescore hook replays the recorded agent messages: the same rewards.
    const replayed = await runCli(["rescore", run]);
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.match(replayed.stdout, /0 rewards changed/);
    const before = readResults(run).map((row) => [row.id, row.reward]);
    const afterRows = readResults(join(`${parent}.rescored`, readdirSync(`${parent}.rescored`)[0] as string)).map((row) => [row.id, row.reward]);
    assert.deepEqual(afterRows, before);
  });
});
