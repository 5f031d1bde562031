import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runCli } from "./support/run-cli.ts";

/**
 * Retail without `--judge-model`: NL_ASSERTION cannot be computed for the tasks that have assertions.
 * Every place that shows a run (eval's table, summary.json, the audit, the report, the card, the HTML
 * report) must say "not computed" for it, never print a number, and no such episode may count as a pass.
 */
const work = mkdtempSync(join(tmpdir(), "toolgym-tau2-not-computed-"));
const NUMBER_AFTER = (name: string) => new RegExp(`${name}[^\\n|]*?\\b[01]\\.\\d{3}`);

function runDirectory(root: string): string {
  const parent = join(root, readdirSync(root)[0] as string);
  return join(parent, readdirSync(parent)[0] as string);
}

describe("components that were not computed", () => {
  const out = join(work, "runs");

  it("eval: the table and summary.json say not computed; the tau2 block counts no such trial as a pass", { timeout: 300_000 }, async () => {
    const result = await runCli(["eval", "--env", "tau2_retail", "--n", "12", "--num-trials", "2", "--out", out, "--quiet", "--workers", "1"]);
    assert.equal(result.code, 0, result.stderr);
    const table = result.stdout.split("\n\n")[0] as string;
    const header = (table.split("\n")[0] as string).split(/\s{2,}/);
    const row = (table.split("\n")[2] as string).split(/\s{2,}/);
    assert.equal(row[header.indexOf("NL_ASSERTION")], "not computed");
    assert.match(result.stdout, /NL_ASSERTION not computed in \d+ of 24 scored episodes/);

    const directory = runDirectory(out);
    const summary = JSON.parse(readFileSync(join(directory, "summary.json"), "utf8"));
    assert.ok(summary.notComputed.NL_ASSERTION > 0, "some of the first 12 retail tasks have NL assertions");
    assert.equal(summary.metrics.NL_ASSERTION, undefined, "no mean of the episodes that happened to have it");
    assert.equal(summary.tau2.basis, "partial");
    assert.equal(summary.tau2.avg_reward, null);
    assert.equal(summary.tau2.not_computed.NL_ASSERTION, summary.notComputed.NL_ASSERTION);

    const rows = readFileSync(join(directory, "results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const partial = rows.filter((row) => row.not_computed?.includes("NL_ASSERTION"));
    assert.equal(partial.length, summary.notComputed.NL_ASSERTION);
    for (const row of partial) assert.equal(row.metrics.NL_ASSERTION, undefined);
    // The scripted oracle reaches reward 1 on the components that were computed; those trials still fail pass^k.
    const tasks = new Set(rows.map((row) => row.example_id));
    const passing = [...tasks].filter((task) =>
      rows.filter((row) => row.example_id === task).every((row) => row.reward === 1 && !row.not_computed?.length),
    ).length;
    assert.ok(partial.some((row) => row.reward === 1));
    assert.equal(summary.tau2.pass_hat["2"], passing / tasks.size);
  });

  it("report (markdown, JSON, HTML) and the card show no number for it", { timeout: 120_000 }, async () => {
    const markdown = await runCli(["report", out]);
    assert.equal(markdown.code, 0, markdown.stderr);
    assert.match(markdown.stdout, /NL_ASSERTION was not computed in \d+ scored episodes/);
    assert.doesNotMatch(markdown.stdout, NUMBER_AFTER("NL_ASSERTION"));
    assert.match(markdown.stdout, /avg_reward not computed/);
    const card = await runCli(["report", out, "--card"]);
    assert.equal(card.code, 0, card.stderr);
    assert.doesNotMatch(card.stdout, NUMBER_AFTER("NL_ASSERTION"));
    assert.match(card.stdout, /pass\^1 \d\.\d{3} \[/);
    const json = JSON.parse((await runCli(["report", out, "--format", "json"])).stdout);
    assert.equal(json.runs[0].components.NL_ASSERTION, undefined);
    assert.ok(json.runs[0].notComputed.NL_ASSERTION > 0);
    const html = await runCli(["report", out, "--format", "html"]);
    assert.equal(html.code, 0, html.stderr);
    assert.match(html.stdout, /NL_ASSERTION: not computed in \d+ episodes/);
    assert.doesNotMatch(html.stdout, /NL_ASSERTION: [01]\.\d{3}/);
    assert.match(html.stdout, /pass\^1 \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] · pass\^2 /, "the HTML table shows pass^k with its CIs");
  });

  it("audit: the table and --json say not computed", { timeout: 300_000 }, async () => {
    const table = await runCli(["audit", "tau2_retail", "--n", "12", "--policies", "oracle,do_nothing_stop"]);
    const lines = table.stdout.split("\n");
    const header = (lines[1] as string).split(/\s{2,}/);
    for (const policy of ["oracle", "do_nothing_stop"]) {
      const cells = (lines.find((line) => line.startsWith(`${policy} `)) as string).split(/\s{2,}/);
      assert.equal(cells[header.indexOf("NL_ASSERTION")], "not computed", policy);
    }
    assert.match(table.stdout, /do_nothing_stop: NL_ASSERTION not computed in \d+ of 12 episodes/);
    const json = JSON.parse((await runCli(["audit", "tau2_retail", "--n", "12", "--policies", "do_nothing_stop", "--json"])).stdout);
    assert.equal(json.policies.do_nothing_stop.components.NL_ASSERTION, null);
    assert.ok(json.policies.do_nothing_stop.not_computed.NL_ASSERTION > 0);
  });
});
