// The CLI's own behaviour: it prints only through the streams main() is given, maps unexpected errors to
// one coded line, lists what the registry holds, exports runs that `toolgym score` scores, picks the newest
// run of a folder, and stops cleanly on Ctrl-C leaving a run that --resume finishes.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { reportError } from "../src/cli/errors.ts";
import { mockOracleResponder, startFaultServer } from "../src/testing/fault-server.ts";
import { runCli } from "./support/run-cli.ts";

const root = resolve(import.meta.dirname, "..");
const work = mkdtempSync(join(tmpdir(), "toolgym-cli-commands-"));

function runDirectories(parent: string): string[] {
  return readdirSync(parent).map((name) => join(parent, name));
}

describe("toolgym CLI commands", () => {
  it("writes nothing to the real stdout or stderr when run in-process", async () => {
    const writes: string[] = [];
    const out = process.stdout.write;
    const err = process.stderr.write;
    // node:test's own reporter frames (binary, with NUL bytes) pass through; anything else is the CLI leaking.
    const spy = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = String(chunk);
      if (text.includes("\u0000")) return (out as (...args: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
      writes.push(text);
      return true;
    }) as typeof process.stdout.write;
    process.stdout.write = spy;
    process.stderr.write = spy;
    let results: Array<{ code: number; stdout: string; stderr: string }>;
    try {
      results = [
        await runCli(["list"]),
        await runCli(["show", "mock", "--json"]),
        // no --quiet: the progress bar must go to the given stderr too
        await runCli(["eval", "--env", "mock", "--n", "5", "--out", join(work, "quiet-runs")]),
        await runCli(["audit", "mock", "--n", "20"]),
        await runCli(["eval", "--env", "mock", "--n", "-1"]),
      ];
    } finally {
      process.stdout.write = out;
      process.stderr.write = err;
    }
    assert.deepEqual(writes, [], "nothing reached the process streams");
    assert.deepEqual(
      results.map((result) => result.code),
      [0, 0, 0, 0, 2],
    );
    assert.match(results[2]?.stdout ?? "", /mock/);
  });

  it("maps an unexpected error to one UNEXPECTED line that says where to report it", () => {
    const report = reportError(new TypeError("cannot read properties of undefined (reading 'x')\n    at somewhere (file.ts:1:2)"));
    assert.equal(report.exitCode, 1);
    assert.doesNotMatch(report.line, /\n/);
    assert.match(report.line, /^toolgym: unexpected error: TypeError: .*please report it.* \[UNEXPECTED\]$/);
  });

  it("--version prints package.json's version; list reads the registry", async () => {
    const version = await runCli(["--version"]);
    assert.equal(version.stdout.trim(), JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version);
    const listed = JSON.parse((await runCli(["list", "--json"])).stdout) as Record<string, Array<{ id: string; env?: string }>>;
    assert.ok(listed.envs?.some((entry) => entry.id === "mock"));
    assert.ok(listed.agents?.some((entry) => entry.env === "mock" && entry.id === "oracle"));
    assert.ok(listed.pilots?.some((entry) => entry.env === "search_plan_act"));
    assert.ok(listed.suites?.some((entry) => entry.id === "quick"));
  });

  it("exports a MuSiQue run that toolgym score scores like the run's own metric", { timeout: 180_000 }, async () => {
    const out = join(work, "musique-runs");
    // A pilot that answers "yes": the official scorer must give the same EM/F1 the environment's reward gave.
    for (const agent of ["oracle", "guess_yes"]) {
      const ran = await runCli(["eval", "--env", "musique", "--n", "40", "--agent", agent, "--quiet", "--out", out, "--run-id", agent]);
      assert.equal(ran.code, 0, ran.stderr);
      const run = join(out, `musique--scripted-${agent}`, agent);
      const predictions = join(work, `${agent}.jsonl`);
      const exported = await runCli(["export", run, "--format", "musique", "--out", predictions]);
      assert.equal(exported.code, 0, exported.stderr);
      const scored = await runCli(["score", "musique", "--gold", join(root, "assets/multihop/musique_dev_sample.jsonl"), "--pred", predictions, "--json"]);
      assert.equal(scored.code, 0, scored.stderr);
      const metrics = (JSON.parse(scored.stdout) as { metrics: Record<string, number> }).metrics;
      const summary = JSON.parse(readFileSync(join(run, "summary.json"), "utf8")) as { metrics: Record<string, number> };
      assert.equal(metrics.answer_em, Math.round((summary.metrics.em as number) * 1000) / 1000, `${agent} EM`);
      assert.equal(metrics.answer_f1, Math.round((summary.metrics.f1 as number) * 1000) / 1000, `${agent} F1`);
      if (agent === "oracle") assert.equal(metrics.answer_f1, 1);
      else assert.ok((metrics.answer_f1 as number) < 0.5);
    }
  });

  it("report over a folder uses the newest run of each benchmark and model, and names the skipped one", { timeout: 180_000 }, async () => {
    const out = join(work, "twice");
    for (let time = 0; time < 2; time++) assert.equal((await runCli(["eval", "--env", "mock", "--n", "4", "--quiet", "--out", out])).code, 0);
    const report = await runCli(["report", out, "--format", "json"]);
    assert.equal(report.code, 0, report.stderr);
    assert.match(report.stderr, /mock \/ scripted-oracle: using the newest complete run .*; skipped /);
    // Run ids start with the second they were made in; two runs in one second order by creation time only.
    const createdAt = (directory: string) => (JSON.parse(readFileSync(join(directory, "metadata.json"), "utf8")) as { createdAt: string }).createdAt;
    const [older, newer] = runDirectories(join(out, "mock--scripted-oracle")).sort((a, b) => createdAt(a).localeCompare(createdAt(b)));
    assert.ok(report.stdout.includes(newer as string) || report.stdout.includes((newer as string).split("/").pop() as string));
    const both = await runCli(["report", older as string, newer as string]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /\[REPORT_RUNS_CONFLICT\]\n {2}mock \/ scripted-oracle: /);
    // A newer run that failed (its server was down) does not replace the complete one (issue 37).
    const dead = ["--model", "x", "--base-url", "http://127.0.0.1:9/v1", "--label", "scripted-oracle", "--no-preflight", "--max-retries", "0"];
    assert.equal((await runCli(["eval", "--env", "mock", "--n", "4", ...dead, "--quiet", "--out", out])).code, 1);
    const afterFailure = await runCli(["report", out, "--format", "json"]);
    assert.equal(afterFailure.code, 0, afterFailure.stderr);
    assert.match(afterFailure.stderr, /using the newest complete run .*; skipped .*failed\)/);
    assert.equal((JSON.parse(afterFailure.stdout) as { runs: Array<{ directory: string; scored: number }> }).runs[0]?.scored, 4);
  });

  it("Ctrl-C stops an eval with a line and exit 130; --resume finishes the run", { timeout: 180_000 }, async () => {
    // A scripted model that stops answering after 40 requests (20 episodes of lookup + finish): the eval cannot
    // finish before the signal however slowly this process is scheduled.
    let requests = 0;
    const server = await startFaultServer({ respond: mockOracleResponder, onRequest: () => ++requests === 41 && server.hold() });
    try {
      const out = join(work, "interrupted");
      const args = [
        "eval",
        "--env",
        "mock",
        "--n",
        "60",
        "--concurrency",
        "1",
        "--base-url",
        server.url,
        "--model",
        "scripted",
        "--quiet",
        "--out",
        out,
        "--run-id",
        "r",
      ];
      const child = spawn(process.execPath, [join(root, "bin/toolgym.js"), ...args], { stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      const run = join(out, "mock--scripted", "r");
      const lineCount = () =>
        existsSync(join(run, "results.jsonl")) ? readFileSync(join(run, "results.jsonl"), "utf8").split("\n").filter(Boolean).length : 0;
      while (lineCount() < 20 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 50));
      child.kill("SIGINT");
      assert.equal(await exited, 130, stderr);
      assert.match(stderr, /^toolgym: interrupted; 20 of 60 episodes are saved; run the same command with --resume to finish \[INTERRUPTED\]$/m);
      const metadata = JSON.parse(readFileSync(join(run, "metadata.json"), "utf8")) as { status: string };
      assert.equal(metadata.status, "interrupted");
      assert.equal(lineCount(), 20);
      server.release();
      const resumed = await runCli([...args, "--resume"]);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.equal(lineCount(), 60);
    } finally {
      await server.close();
    }
  });

  it("eval --suite applies --max-turns to every row's episodes", { timeout: 120_000 }, async () => {
    const out = join(work, "suite-max-turns");
    const suiteFile = join(work, "max-turns.json");
    writeFileSync(suiteFile, JSON.stringify({ name: "max-turns", rows: [{ benchmark: "one", env: "mock", n: 2 }] }));
    const result = await runCli(["eval", "--suite", suiteFile, "--max-turns", "3", "--quiet", "--out", out]);
    assert.equal(result.code, 0, result.stderr);
    const [run] = runDirectories(join(out, "mock--scripted"));
    const metadata = JSON.parse(readFileSync(join(run as string, "metadata.json"), "utf8")) as { generation: { maxTurns: number } };
    assert.equal(metadata.generation.maxTurns, 3);
    const results = readFileSync(join(run as string, "results.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean);
    for (const line of results) assert.equal((JSON.parse(line) as { info: { trajectory: { maxTurns: number } } }).info.trajectory.maxTurns, 3);
  });

  it("Ctrl-C stops an eval --suite: progress on stderr, the row's run marked interrupted, later rows not started, exit 130", { timeout: 180_000 }, async () => {
    // As the eval's Ctrl-C test: a scripted model that stops answering after 40 requests (20 episodes of lookup +
    // finish), so the first row cannot finish, nor the second start, before the signal however slowly this runs.
    let requests = 0;
    const server = await startFaultServer({ respond: mockOracleResponder, onRequest: () => ++requests === 41 && server.hold() });
    try {
      const out = join(work, "suite-interrupted");
      const suiteFile = join(work, "two-rows.json");
      const rows = ["first", "second"].map((benchmark) => ({ benchmark, env: "mock", n: 3000, seed: 1 }));
      writeFileSync(suiteFile, JSON.stringify({ name: "two-rows", rows }));
      const args = ["eval", "--suite", suiteFile, "--concurrency", "1", "--base-url", server.url, "--model", "scripted", "--out", out];
      const child = spawn(process.execPath, [join(root, "bin/toolgym.js"), ...args], { stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      // Both rows run the mock environment, so their runs share one folder; the metadata names the row.
      const runs = () => (existsSync(join(out, "mock--scripted")) ? runDirectories(join(out, "mock--scripted")) : []);
      const lineCount = () => {
        const results = runs().map((run) => join(run, "results.jsonl"));
        return results.reduce((sum, file) => sum + (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0), 0);
      };
      while (lineCount() < 20 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 50));
      child.kill("SIGINT");
      assert.equal(await exited, 130, stderr);
      assert.match(
        stderr,
        /^toolgym: interrupted in row 1 of 2 \(first\); the runs so far are in .*, the stopped one marked interrupted; run the suite again to finish \[INTERRUPTED\]$/m,
      );
      // The progress stream reached stderr (it counts episodes out of the row's 3000).
      assert.match(stderr, / \d+\/3000 /);
      const [run, ...others] = runs();
      assert.deepEqual(others, [], "the second row must not start");
      const metadata = JSON.parse(readFileSync(join(run as string, "metadata.json"), "utf8")) as { status: string; benchmark: string };
      assert.equal(metadata.benchmark, "first");
      assert.equal(metadata.status, "interrupted");
      assert.equal(lineCount(), 20, "the episodes answered before the hold, no more");
    } finally {
      await server.close();
    }
  });
});
