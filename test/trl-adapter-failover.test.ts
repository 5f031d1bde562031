import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { requirePython } from "./support/qwen3.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const root = resolve(import.meta.dirname, "..");

/** `toolgym serve` as its own process (so the test can kill it); resolves with its URL from the banner. */
function serve(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [resolve(root, "bin/toolgym.js"), "serve", "--port", "0", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((done, fail) => {
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url) done({ child, url });
    });
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("exit", (code) => fail(new Error(`toolgym serve exited with ${code}: ${output}`)));
  });
}

describe("toolgym_trl over two servers, one killed mid-run", () => {
  let serverA: { child: ChildProcess; url: string };
  let serverB: { child: ChildProcess; url: string };
  let report: Json;
  let statsB: Json;
  before(async () => {
    [serverA, serverB] = await Promise.all([serve([]), serve(["--workers", "2"])]);
    const result = await promisify(execFile)(
      requirePython(),
      [resolve(root, "python/tests/check_multi_server.py"), serverA.url, String(serverA.child.pid), serverB.url],
      { encoding: "utf8", env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" }, timeout: 180_000, maxBuffer: 64 * 1024 * 1024 },
    );
    report = JSON.parse(result.stdout.trim().split("\n").at(-1) as string);
    statsB = (await (await fetch(`${serverB.url}/stats`)).json()) as Json;
  });
  after(() => {
    for (const server of [serverA, serverB]) if (server?.child.exitCode === null) server.child.kill("SIGTERM");
  });

  it("the run finishes: every episode was played, server A was killed after 12", () => {
    assert.equal(report.killed_at, 12);
    assert.equal(serverA.child.signalCode, "SIGKILL");
    assert.equal(report.episodes.length, 48);
    assert.deepEqual(
      report.episodes.map((episode: Json) => episode.episode).sort((a: number, b: number) => a - b),
      [...Array(48).keys()],
    );
  });

  it("sessions of one row (a GRPO group) met on one server, and rows spread over both", () => {
    assert.equal(report.groups.length, 6);
    for (const group of report.groups) assert.equal(new Set(group).size, 1, `a group went to ${group.join(", ")}`);
    assert.deepEqual(new Set(report.groups.map((group: string[]) => group[0])), new Set(["A", "B"]));
  });

  it("sessions were spread over both servers, and moved to B once A was gone", () => {
    const before = report.episodes.filter((episode: Json) => !episode.created_after_kill);
    const after = report.episodes.filter((episode: Json) => episode.created_after_kill);
    assert.ok(before.some((episode: Json) => episode.server === "A") && before.some((episode: Json) => episode.server === "B"));
    assert.ok(after.length >= 20, `${after.length} episodes started after the kill`);
    assert.deepEqual(new Set(after.map((episode: Json) => episode.server)), new Set(["B"]));
    for (const episode of after) assert.equal(episode.reward, 1, `episode ${episode.episode} on B finished with reward 1`);
  });

  it("only episodes in flight on A when it died were lost, and they got no reward", () => {
    const lost = report.episodes.filter((episode: Json) => episode.reward === null);
    assert.deepEqual(new Set(lost.map((episode: Json) => episode.server)), lost.length > 0 ? new Set(["A"]) : new Set());
    assert.ok(lost.length <= 8, `${lost.length} episodes lost (8 threads)`);
    assert.equal(report.failures.length, lost.length);
    for (const failure of report.failures) assert.match(failure.error, /the episode is lost: its toolgym server http:\/\/127\.0\.0\.1:\d+ stopped answering/);
  });

  it("no tool call ran twice: each session's server-side call count equals the call's sequence number", () => {
    for (const call of report.calls) assert.equal(call.calls, call.seq, `${call.server} ${call.session} call ${call.seq}`);
    const onB = report.calls.filter((call: Json) => call.server === "B");
    // Every 5th call through the proxy lost its answer after running; the client resent it with its number.
    assert.ok(report.proxy.dropped >= 10, JSON.stringify(report.proxy));
    assert.equal(statsB.repeatedCalls, report.proxy.dropped, "each resent call was answered from the record");
    assert.equal(statsB.toolCalls, onB.length, "B ran exactly the calls the client made to it, once each");
    assert.equal(statsB.workers, 2);
  });
});
