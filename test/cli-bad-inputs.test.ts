// A careless user's command lines, one table: every bad input ends with exit 2 (usage) or 1 (runtime),
// exactly one line on stderr `toolgym: <message> [CODE]`, no stack trace, nothing on stdout, and no output
// file left behind. The CLI runs in-process with its own streams (test/support/run-cli.ts).
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "./support/run-cli.ts";

const work = mkdtempSync(join(tmpdir(), "toolgym-bad-inputs-"));
const at = (name: string) => join(work, name);
const empty = at("empty.jsonl");
const missing = at("missing.jsonl");
const emptyDir = at("empty-dir");

interface Case {
  argv: string[];
  exit: 1 | 2;
  code: string;
  /** A file or directory the command must not leave behind. */
  absent?: string;
  /** Extra check on the message. */
  says?: RegExp;
}

/** Servers the cases need: a busy port, a closed port (dead server), a server whose /models answers 404. */
const servers: { busy?: Server; notFound?: Server; busyPort: number; deadPort: number; notFoundPort: number } = { busyPort: 0, deadPort: 0, notFoundPort: 0 };

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
}

before(async () => {
  writeFileSync(empty, "");
  mkdirSync(emptyDir);
  servers.busy = createServer((_, response) => response.end("busy"));
  servers.busyPort = await listen(servers.busy);
  const dead = createServer();
  servers.deadPort = await listen(dead);
  await new Promise((resolve) => dead.close(resolve));
  servers.notFound = createServer((_, response) => {
    response.statusCode = 404;
    response.end("no such route");
  });
  servers.notFoundPort = await listen(servers.notFound);
  // A finished mock run, for `export` with a format mock does not offer.
  const made = await runCli(["eval", "--env", "mock", "--n", "2", "--quiet", "--out", at("runs"), "--run-id", "r1"]);
  assert.equal(made.code, 0, made.stderr);
});

after(() => {
  servers.busy?.close();
  servers.notFound?.close();
});

function cases(): Case[] {
  const evalOut = at("eval-out");
  const belowRange: Array<[string, string]> = [
    ["--n", "-3"],
    ["--n", "0"],
    ["--concurrency", "0"],
    ["--concurrency", "-5"],
    ["--samples", "0"],
    ["--max-turns", "0"],
    ["--max-retries", "-1"],
    ["--seed", "-1"],
    ["--temperature", "-0.5"],
    ["--top-p", "0"],
    ["--top-k", "-2"],
    ["--max-tokens", "0"],
    ["--timeout", "0"],
    ["--sampling-seed", "-1"],
    ["--n", "abc"],
    ["--n", "1.5"],
  ];
  return [
    ...belowRange.map(([option, value]): Case => ({
      argv: ["eval", "--env", "mock", option, value, "--out", evalOut],
      exit: 2,
      code: "OPTION_INVALID",
      absent: evalOut,
      says: new RegExp(option),
    })),
    { argv: ["eval", "--env", "mock", "--top-p", "1.5"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["eval", "--config", ""], exit: 2, code: "OPTION_EMPTY" },
    { argv: ["eval", "--env", ""], exit: 2, code: "OPTION_EMPTY" },
    { argv: ["eval", "--env", "mock,,mock"], exit: 2, code: "OPTION_EMPTY" },
    { argv: ["eval", "--env", "mock", "--config", "[1]"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["eval", "--env", "mock", "--config", '{"keyz": 1}', "--out", evalOut], exit: 2, code: "ENV_CONFIG_INVALID", absent: evalOut, says: /keyz/ },
    { argv: ["eval", "--env", "mock", "--chat-template-kwargs", "[1]"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["eval", "--env", "mock", "--http-client", "curl"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["eval", "--nn", "3"], exit: 2, code: "OPTION_UNKNOWN" },
    { argv: ["eval", "--concurency", "3"], exit: 2, code: "OPTION_UNKNOWN", says: /did you mean --concurrency\?/ },
    { argv: ["eval", "--n"], exit: 2, code: "OPTION_VALUE_MISSING" },
    { argv: ["eval", "--env", "nope"], exit: 2, code: "ENV_UNKNOWN" },
    { argv: ["eval", "--env", "mock", "--split", "nope"], exit: 2, code: "SPLIT_UNKNOWN" },
    { argv: ["eval", "--env", "mock", "--agent", "nope", "--out", evalOut], exit: 2, code: "POLICY_UNKNOWN", absent: evalOut },
    { argv: ["eval", "--env", "musique", "--n", "100", "--out", evalOut], exit: 2, code: "N_BEYOND_DATASET", absent: evalOut, says: /40/ },
    { argv: ["eval", "--env", "mock", "--model", "base=ftp://example.org#m"], exit: 2, code: "URL_INVALID", says: /ftp:\/\/example\.org/ },
    { argv: ["eval", "--env", "mock", "--base-url", "not-a-url", "--model", "m"], exit: 2, code: "URL_INVALID" },
    { argv: ["eval", "--env", "mock", "--base-url", "http://127.0.0.1:8000/v1"], exit: 2, code: "MODEL_MISSING" },
    {
      argv: ["eval", "--env", "mock", "--base-url", `http://127.0.0.1:${servers.deadPort}/v1`, "--model", "m", "--n", "2", "--out", evalOut],
      exit: 1,
      code: "PREFLIGHT_FAILED",
      absent: evalOut,
      says: new RegExp(`127\\.0\\.0\\.1:${servers.deadPort}/v1/models could not connect \\(ECONNREFUSED\\)`),
    },
    {
      argv: ["eval", "--env", "mock", "--base-url", `http://127.0.0.1:${servers.notFoundPort}/v1`, "--model", "m", "--out", evalOut],
      exit: 1,
      code: "PREFLIGHT_FAILED",
      absent: evalOut,
      says: /answered HTTP 404: no such route/,
    },
    {
      argv: ["eval", "--env", "mock", "--n", "3", "--quiet", "--out", at("runs"), "--run-id", "r1", "--resume"],
      exit: 2,
      code: "RESUME_MISMATCH",
      says: /--n \(2 then, 3 now\)/,
    },
    { argv: ["eval", "--suite", "nope"], exit: 2, code: "SUITE_UNKNOWN" },
    { argv: ["eval", "--suite", "seed-card", "--out", evalOut], exit: 2, code: "SUITE_DATA_MISSING", absent: evalOut },
    { argv: ["audit", "mock", "--n", "-1"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["audit", "mock", "--n", "0"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["audit", "mock", "--seed", "-1"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["audit", "mock", "--config", ""], exit: 2, code: "OPTION_EMPTY" },
    { argv: ["audit", "nope"], exit: 2, code: "ENV_UNKNOWN" },
    { argv: ["show", "mock", "--index", "-1"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["show", "mock", "--seed", "x"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["show"], exit: 2, code: "ARGUMENT_MISSING" },
    { argv: ["show", "mock", "extra"], exit: 2, code: "ARGUMENTS_EXCESS" },
    { argv: ["replay", "mock", "--calls", missing], exit: 2, code: "FILE_NOT_FOUND" },
    { argv: ["replay", "mock", "--calls", empty], exit: 2, code: "FILE_EMPTY" },
    { argv: ["replay", "mock", "--index", "-1", "--calls", empty], exit: 2, code: "OPTION_INVALID" },
    { argv: ["dataset", "mock", "--n", "-1", "--out", at("d1.jsonl")], exit: 2, code: "OPTION_INVALID", absent: at("d1.jsonl") },
    { argv: ["dataset", "mock", "--n", "0", "--out", at("d2.jsonl")], exit: 2, code: "OPTION_INVALID", absent: at("d2.jsonl") },
    { argv: ["dataset", "mock", "--out", ""], exit: 2, code: "OPTION_EMPTY" },
    { argv: ["dataset", "mock", "--n", "2", "--out", at("d3.csv")], exit: 2, code: "USAGE_INVALID", absent: at("d3.csv") },
    { argv: ["sft", "synth", "--n", "0", "--out", at("s1.jsonl")], exit: 2, code: "OPTION_INVALID", absent: at("s1.jsonl") },
    { argv: ["sft", "synth", "--n", "-1", "--out", at("s2.jsonl")], exit: 2, code: "OPTION_INVALID", absent: at("s2.jsonl") },
    { argv: ["sft", "tau2", empty, "--model-dir", work, "--out", at("t1.jsonl")], exit: 2, code: "FILE_EMPTY", absent: at("t1.jsonl") },
    { argv: ["sft", "tau2", missing, "--model-dir", work, "--out", at("t2.jsonl")], exit: 2, code: "FILE_NOT_FOUND", absent: at("t2.jsonl") },
    { argv: ["sft", "tau2", empty, "--model-dir", at("no-model"), "--out", at("t3.jsonl")], exit: 2, code: "FILE_EMPTY", absent: at("t3.jsonl") },
    { argv: ["sft", "tau2", empty, "--model-dir", work, "--out", at("t4.jsonl"), "--workers", "-1"], exit: 2, code: "OPTION_INVALID", absent: at("t4.jsonl") },
    {
      argv: ["sft", "tau2", empty, "--model-dir", work, "--out", at("t5.jsonl"), "--max-tokens", "0"],
      exit: 2,
      code: "OPTION_INVALID",
      absent: at("t5.jsonl"),
    },
    { argv: ["score", "musique", "--gold", missing, "--pred", empty], exit: 2, code: "FILE_NOT_FOUND" },
    { argv: ["score", "musique", "--gold", "assets/multihop/musique_dev_sample.jsonl", "--pred", empty], exit: 2, code: "FILE_EMPTY" },
    {
      argv: ["score", "nope", "--gold", "assets/multihop/musique_dev_sample.jsonl", "--pred", "assets/multihop/musique_dev_sample.jsonl"],
      exit: 2,
      code: "DATASET_UNKNOWN",
    },
    { argv: ["score", "musique", "--pred", "assets/multihop/musique_dev_sample.jsonl"], exit: 2, code: "OPTION_REQUIRED" },
    { argv: ["report", missing], exit: 2, code: "FILE_NOT_FOUND" },
    { argv: ["report", emptyDir], exit: 2, code: "REPORT_NO_INPUT" },
    { argv: ["report", at("runs"), "--format", "pdf"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["view", missing], exit: 2, code: "FILE_NOT_FOUND" },
    { argv: ["view", at("runs"), "--limit", "0", "--out", at("v.html")], exit: 2, code: "OPTION_INVALID", absent: at("v.html") },
    { argv: ["view", at("runs"), "--limit", "-1", "--out", at("v.html")], exit: 2, code: "OPTION_INVALID", absent: at("v.html") },
    { argv: ["serve", "--port", "70000"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["serve", "--port", "-1"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["serve", "--max-sessions", "0"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["serve", "--idle-seconds", "0"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["serve", "--port", String(servers.busyPort)], exit: 1, code: "PORT_IN_USE", says: new RegExp(`port ${servers.busyPort} is in use; pass --port`) },
    { argv: ["export", missing, "--format", "musique", "--out", at("e1")], exit: 2, code: "FILE_NOT_FOUND", absent: at("e1") },
    { argv: ["export", emptyDir, "--format", "musique", "--out", at("e2")], exit: 2, code: "RUN_NOT_FOUND", absent: at("e2") },
    {
      argv: ["export", at("runs/mock--scripted-oracle/r1"), "--format", "musique", "--out", at("e3")],
      exit: 2,
      code: "EXPORT_FORMAT_UNKNOWN",
      absent: at("e3"),
    },
    { argv: ["list", "nope"], exit: 2, code: "OPTION_INVALID" },
    { argv: ["frobnicate"], exit: 2, code: "COMMAND_UNKNOWN" },
  ];
}

describe("bad inputs: one coded line, the right exit code, nothing left behind", () => {
  it("every case of the table", { timeout: 300_000 }, async () => {
    const table = cases();
    assert.ok(table.length > 70);
    for (const entry of table) {
      const label = `toolgym ${entry.argv.join(" ")}`;
      const result = await runCli(entry.argv);
      assert.equal(result.code, entry.exit, `${label}: exit ${result.code}, stderr: ${result.stderr}`);
      const lines = result.stderr.split("\n").filter((line) => line !== "");
      assert.equal(lines.length, 1, `${label}: one line on stderr, got:\n${result.stderr}`);
      assert.match(lines[0] as string, new RegExp(`^toolgym: \\S.* \\[${entry.code}\\]$`), label);
      assert.doesNotMatch(result.stderr, /\bat .+:\d+:\d+|node:internal|Error:/, `${label}: no stack trace or raw error name`);
      assert.equal(result.stdout, "", `${label}: nothing on stdout`);
      if (entry.says) assert.match(lines[0] as string, entry.says, label);
      if (entry.absent) assert.equal(existsSync(entry.absent), false, `${label}: left ${entry.absent} behind`);
    }
  });
});
