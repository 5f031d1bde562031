import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parseConfig } from "../src/core/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { runEvaluation, type RunSummary } from "../src/eval/run-evaluation.ts";
import { ALL_GROUP } from "../src/eval/report/breakdown.ts";
import { buildReport, loadInputs, renderCard, renderHtml, renderMarkdown, renderReport, type Report } from "../src/eval/report/index.ts";

const TASKS = ["goto", "pickup", "open", "putnext", "pick_up_seq_go_to"];

/** Per-task means read straight from results.jsonl, independently of the report code. */
function expectedMeans(directory: string): Map<string, { n: number; return: number; progression: number }> {
  const sums = new Map<string, { n: number; return: number; progression: number }>();
  for (const line of readFileSync(join(directory, "results.jsonl"), "utf8").split("\n")) {
    if (!line.trim()) continue;
    const result = JSON.parse(line) as { status: string; metrics: Record<string, number>; info: { trajectory: { diagnostics: { task: string } } } };
    assert.equal(result.status, "scored");
    const task = result.info.trajectory.diagnostics.task;
    const sum = sums.get(task) ?? { n: 0, return: 0, progression: 0 };
    sums.set(task, { n: sum.n + 1, return: sum.return + result.metrics.return!, progression: sum.progression + result.metrics.progression! });
  }
  return new Map([...sums].map(([task, sum]) => [task, { n: sum.n, return: sum.return / sum.n, progression: sum.progression / sum.n }]));
}

describe("report: BabyAI per-task sub-rows and the protocol", () => {
  let root: string;
  let summaries: RunSummary[];
  let report: Report;
  before(async () => {
    root = mkdtempSync(join(tmpdir(), "toolgym-report-babyai-"));
    const env = getEnvironment("babyai");
    summaries = await runEvaluation({
      rows: [
        { env, config: parseConfig("babyai", env.configSchema, '{"task":"mixed"}'), split: "eval", seed: 0, n: 10, benchmark: "babyai", metrics: ["return"] },
      ],
      models: [
        { kind: "scripted", label: "oracle", policy: "oracle" },
        { kind: "scripted", label: "random", policy: "random_actions" },
      ],
      out: join(root, "runs"),
      quiet: true,
    });
    report = buildReport(loadInputs([join(root, "runs")]));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("keeps the overall row and adds one sub-row per task with n and the means of results.jsonl", () => {
    assert.equal(report.rows.length, 1);
    const row = report.rows[0]!;
    assert.deepEqual(
      [row.benchmark, row.metric, row.cells.map((cell) => [cell.model, cell.n])],
      [
        "babyai",
        "return",
        [
          ["oracle", 10],
          ["random", 10],
        ],
      ],
    );
    assert.equal(row.comparisons.length, 1, "the overall row keeps its paired comparison");
    const breakdown = row.breakdown!;
    assert.deepEqual([breakdown.key, breakdown.metrics, breakdown.protocols], ["task", ["return", "progression"], ["text"]]);
    assert.deepEqual(
      breakdown.groups.map((group) => group.value),
      [...TASKS, ALL_GROUP],
    );
    for (const summary of summaries) {
      const expected = expectedMeans(summary.dir);
      assert.deepEqual([...expected.keys()].sort(), [...TASKS].sort());
      const all = breakdown.groups.at(-1)!.cells.find((candidate) => candidate.model === summary.model)!;
      const overall = row.cells.find((cell) => cell.model === summary.model)!;
      assert.equal(all.n, 10);
      assert.deepEqual(all.metrics.return, { mean: overall.mean, low: overall.low, high: overall.high }, "all tasks repeats the overall row's return");
      const episodes = [...expected.values()];
      const progression = episodes.reduce((sum, entry) => sum + entry.progression * entry.n, 0) / 10;
      assert.ok(Math.abs(all.metrics.progression!.mean - progression) < 1e-12, `${summary.model} overall progression`);
      for (const group of breakdown.groups.slice(0, -1)) {
        const cell = group.cells.find((candidate) => candidate.model === summary.model)!;
        const want = expected.get(group.value)!;
        assert.equal(cell.n, 2, `${summary.model} ${group.value}`);
        assert.equal(cell.n, want.n);
        assert.ok(Math.abs(cell.metrics.return!.mean - want.return) < 1e-12, `${summary.model} ${group.value} return`);
        assert.ok(Math.abs(cell.metrics.progression!.mean - want.progression) < 1e-12, `${summary.model} ${group.value} progression`);
        for (const value of Object.values(cell.metrics)) assert.ok(value.low <= value.mean && value.mean <= value.high);
      }
    }
    const oracle = breakdown.groups.slice(0, -1).map((group) => group.cells.find((cell) => cell.model === "oracle")!);
    assert.ok(
      oracle.every((cell) => cell.metrics.progression!.mean === 1 && cell.metrics.return!.mean > 0.5),
      "the oracle solves every task",
    );
  });

  it("renders the sub-rows, naming the protocol, in markdown, JSON, HTML and the card", () => {
    const markdown = renderMarkdown(report);
    assert.match(markdown, /^\| babyai \| mean episode return \| \d\.\d{3} \[/m, "the overall row is unchanged");
    for (const task of TASKS) {
      const line = new RegExp(
        `^\\| ↳ babyai \\(text protocol\\) · ${task} \\| mean episode return · progression \\| \\d\\.\\d{3} \\[[^\\]]+\\] · 1\\.000 \\[1\\.000, 1\\.000\\] \\(n=2\\) \\| [^|]+\\(n=2\\) \\| — \\| — \\| — \\|$`,
        "m",
      );
      assert.match(markdown, line, `markdown sub-row for ${task}`);
    }
    assert.match(
      markdown,
      /^\| ↳ babyai \(text protocol\) · all tasks \| mean episode return · progression \| 0\.\d{3} \[[^\]]+\] · 1\.000 \[1\.000, 1\.000\] \(n=10\) \|/m,
    );
    assert.match(markdown, /sub-rows per task \(from each episode's diagnostics\.task; text protocol\)/);
    const lines = markdown.split("\n");
    assert.ok(
      lines.findIndex((line) => line.startsWith("| babyai |")) < lines.findIndex((line) => line.startsWith("| ↳ babyai")),
      "sub-rows follow the overall row",
    );

    const json = JSON.parse(renderReport(report, { format: "json" })) as Report;
    assert.deepEqual(
      json.rows[0]!.breakdown!.groups.map((group) => [group.value, group.cells.map((cell) => cell.n)]),
      [...TASKS.map((task) => [task, [2, 2]]), [ALL_GROUP, [10, 10]]],
    );
    const html = renderHtml(report);
    assert.equal(html.match(/<tr class="subrow">/g)?.length, TASKS.length + 1);
    assert.match(html, /<td>↳ babyai \(text protocol\) · pick_up_seq_go_to<\/td>/);
    const card = renderCard(report);
    for (const task of TASKS)
      assert.match(card, new RegExp(`^\\| ↳ babyai \\(text protocol\\) · ${task} \\| mean episode return · progression \\| 2 \\| `, "m"));
  });
});
