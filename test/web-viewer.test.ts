import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parseConfig } from "../src/core/index.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { runEvaluation, type RunSummary } from "../src/eval/run-evaluation.ts";
import { loadViewerData } from "../src/web/viewer-data.ts";
import { embedJson } from "../src/web/viewer-html.ts";
import { withWatchedPage } from "./support/chromium.ts";
import { runCli } from "./report-support.ts";

const HOSTILE_ID = "mock/eval/0/99#0";
const HOSTILE_TEXT = "<script>alert(1)</script> then </script><img src=x onerror=alert(2)> <!-- end";
const LONG_RESULT = JSON.stringify({ rows: Array.from({ length: 80 }, (_, index) => ({ index, note: `row ${index} of a long tool result` })) });

/** An errored result written by hand: hostile text everywhere the page shows text, a reward component that could not be computed. */
function hostileResult(): Record<string, unknown> {
  const messages = [
    { role: "system", content: "You look keys up." },
    { role: "user", content: HOSTILE_TEXT },
    {
      role: "assistant",
      content: "</script><script>alert(3)</script>",
      reasoning_content: "thinking about <b>bold</b> moves",
      tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"key":"</script><script>alert(4)</script>"}' } }],
    },
    { role: "tool", tool_call_id: "call_1", name: "lookup", content: LONG_RESULT },
    { role: "assistant", content: null, tool_calls: [{ id: "call_2", type: "function", function: { name: "finish", arguments: '{"answer": "unterminated' } }] },
    { role: "tool", tool_call_id: "call_2", name: "finish", content: '{"ok":false,"error":"invalid JSON arguments"}' },
  ];
  const judgeError = { type: "RewardError", code: "REWARD_FAILED", message: "component 'judge': <script>alert(5)</script> timed out", boundary: "reward" };
  return {
    example_id: 99,
    sample: 0,
    id: HOSTILE_ID,
    task: "mock",
    prompt: messages.slice(0, 2),
    completion: messages.slice(2),
    answer: "<i>gold</i>",
    reward: null,
    metrics: { outcome: 1 },
    status: "errored",
    error: judgeError,
    turns: 2,
    termination: "finished",
    format_errors: 1,
    info: {
      trajectory: {
        schemaVersion: 1,
        id: "mock/eval/0/99",
        env: { id: "mock", version: "1", split: "eval", seed: 0, index: 99, config: {} },
        agent: { id: "hand" },
        messages,
        steps: [
          { turn: 1, name: "lookup", arguments: { key: "x" }, result: LONG_RESULT, isError: false },
          { turn: 2, name: "finish", arguments: '{"answer": "unterminated', result: "{}", isError: true, errorKind: "invalid_json_arguments" },
        ],
        turns: 2,
        maxTurns: 4,
        termination: "finished",
        reward: { total: null, components: { outcome: 1, judge: null }, formula: "total = outcome × judge", errors: [judgeError], diagnostics: { lookups: 1 } },
        formatErrors: { count: 1, byKind: { invalid_json_arguments: 1 }, list: [{ kind: "invalid_json_arguments", message: "Unterminated string <script>" }] },
        errors: [],
        usage: { promptTokens: 0, completionTokens: 0 },
        diagnostics: { note: "</script>" },
      },
      timing: { startedAt: "2026-01-01T00:00:00.000Z", durationMs: 3 },
    },
  };
}

function readResults(directory: string): Array<Record<string, unknown>> {
  return readFileSync(join(directory, "results.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.startsWith("{") && line.endsWith("}"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("view: the trajectory viewer", () => {
  let root: string;
  let runs: string;
  let htmlFile: string;
  let summaries: RunSummary[];
  before(async () => {
    root = mkdtempSync(join(tmpdir(), "toolgym-view-"));
    runs = join(root, "runs");
    const mock = getEnvironment("mock");
    const searchPlan = getEnvironment("search_plan_act");
    summaries = [
      ...(await runEvaluation({
        rows: [{ env: mock, config: parseConfig("mock", mock.configSchema, "{}"), split: "eval", seed: 0, n: 3 }],
        models: [{ kind: "scripted" }],
        out: runs,
        quiet: true,
      })),
      ...(await runEvaluation({
        rows: [{ env: searchPlan, config: parseConfig("search_plan_act", searchPlan.configSchema, "{}"), split: "eval", seed: 0, n: 6 }],
        models: [
          { kind: "scripted", label: "noisy", policy: "noisy_oracle_0.3" },
          { kind: "scripted", label: "garbage", policy: "format_garbage" },
        ],
        out: runs,
        quiet: true,
        concurrency: 4,
      })),
    ];
    // The hostile line, then a torn last line (a run killed mid-write).
    appendFileSync(join(summaries[0]!.dir, "results.jsonl"), `${JSON.stringify(hostileResult())}\n{"id": "mock/eval/0/100#0", "sta`);
    htmlFile = join(root, "out", "view.html");
    const result = await runCli(["view", runs, "--out", htmlFile]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /viewer written to .* \(16 episodes from 3 runs/);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("streams the runs, tolerating a torn last line, and honours --limit", async () => {
    const data = await loadViewerData([runs]);
    assert.equal(data.runs.length, 3);
    assert.equal(data.episodes.length, 3 + 1 + 6 + 6);
    const mockRun = data.runs.find((run) => run.env === "mock");
    assert.ok(
      mockRun?.notes.some((note) => note.startsWith("ignored a torn last line 5")),
      JSON.stringify(mockRun?.notes),
    );
    const hostile = data.episodes.find((episode) => episode.id === HOSTILE_ID);
    assert.equal(hostile?.status, "errored");
    assert.deepEqual(hostile?.breakdown?.components, { outcome: 1, judge: null });
    assert.deepEqual(
      hostile?.messages.map((message) => [message.role, message.isError ?? false]),
      [
        ["system", false],
        ["user", false],
        ["assistant", false],
        ["tool", false],
        ["assistant", false],
        ["tool", true],
      ],
    );
    const limited = await loadViewerData([summaries[1]!.dir], { limit: 2 });
    assert.equal(limited.episodes.length, 2);
    assert.equal(limited.runs[0]?.truncated, true);
    assert.ok(limited.runs[0]?.notes.includes("showing the first 2 results only (--limit 2)"));
    const cli = await runCli(["view", runs, "--limit", "0", "--out", join(root, "never.html")]);
    assert.equal(cli.code, 2);
    assert.match(cli.stderr, /--limit must be an integer ≥ 1, got .0. \[OPTION_INVALID\]/);
  });

  it("embeds the data so that no text can end its script tag", () => {
    const embedded = embedJson({ text: HOSTILE_TEXT });
    assert.doesNotMatch(embedded, /</);
    assert.deepEqual(JSON.parse(embedded), { text: HOSTILE_TEXT });
    const html = readFileSync(htmlFile, "utf8");
    assert.match(html, /^<!doctype html>/);
    assert.equal(html.split("<script").length - 1, 2, "the data tag and the page script, nothing from the data");
    assert.equal(html.split("</script").length - 1, 2);
    assert.doesNotMatch(html, /<link|<img|<iframe|https?:\/\//i, "no external resources");
    assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
  });

  it("lists, filters, sorts and shows episodes in headless Chromium, rendering trajectory text as text", async () => {
    await withWatchedPage({ file: htmlFile, viewport: { width: 1400, height: 900 } }, async ({ page, url, problems, requests }) => {
      const rows = page.locator("#episode-list .row");
      assert.equal(await rows.count(), 16);
      assert.equal(await page.locator("#count").innerText(), "16 of 16 episodes");
      assert.match(await page.locator("#notes").innerText(), /1 note/);

      // A search_plan_act episode of the noisy oracle: tool calls, results, the reward breakdown.
      const noisy = readResults(summaries[1]!.dir).find((result) => result.status === "scored" && Number(result.turns) >= 2)!;
      await rows
        .filter({ hasText: "noisy" })
        .filter({ hasText: String(noisy.id) })
        .click();
      const detail = page.locator("#detail");
      assert.equal(await detail.locator("h2").textContent(), `${noisy.id}scored`);
      const firstCall = (noisy.completion as Array<{ tool_calls?: Array<{ function: { name: string; arguments: string } }> }>)[0]!.tool_calls![0]!;
      assert.equal(await detail.locator(".call-name").first().innerText(), `→ ${firstCall.function.name}`);
      assert.equal(await detail.locator(".call pre").first().innerText(), JSON.stringify(JSON.parse(firstCall.function.arguments), null, 2));
      assert.equal(await detail.locator(".msg.tool").count(), await detail.locator(".call").count(), "one result per tool call");
      const rewardText = await detail.locator(".reward-table").innerText();
      assert.match(rewardText, new RegExp(`total\\s+${(noisy.reward as number).toFixed(3)}`));
      for (const component of ["outcome", "grounding", "stop"]) assert.match(rewardText, new RegExp(`${component}\\s+\\d\\.\\d{3}`));

      // The hostile errored episode: everything shown as text, nothing executed or loaded.
      await rows.filter({ hasText: HOSTILE_ID }).click();
      const conversation = detail.locator("#conversation");
      assert.equal(await conversation.locator(".msg").count(), 6);
      assert.equal(await conversation.locator(".msg.user pre").innerText(), HOSTILE_TEXT);
      assert.equal(await conversation.locator(".msg.assistant > pre").first().innerText(), "</script><script>alert(3)</script>");
      assert.match(await conversation.locator(".call pre").first().innerText(), /"key": "<\/script><script>alert\(4\)<\/script>"/);
      assert.equal(await detail.locator("script, img, b, i").count(), 0, "no element came from the data");
      assert.match(
        await detail.locator("tr.not-computed").innerText(),
        /judge\s+not computed — REWARD_FAILED: component 'judge': <script>alert\(5\)<\/script> timed out/,
      );
      assert.match(await detail.locator(".section", { hasText: "Format errors (1)" }).innerText(), /invalid_json_arguments: Unterminated string <script>/);
      assert.equal(await conversation.locator(".badge", { hasText: "arguments are not valid JSON" }).count(), 1);
      assert.equal(await conversation.locator(".msg.tool.failed .badge").innerText(), "error: invalid_json_arguments");
      const longResult = conversation.locator(".msg.tool details.long");
      assert.equal(await longResult.count(), 1, "the long result is collapsed");
      assert.equal(await longResult.locator("pre").isVisible(), false);
      await longResult.locator("summary").click();
      assert.match(await longResult.locator("pre").innerText(), /"note": "row 79 of a long tool result"/);
      const reasoning = conversation.locator("details.reasoning");
      await reasoning.locator("summary").click();
      assert.equal(await reasoning.locator("pre").innerText(), "thinking about <b>bold</b> moves");

      // Filters and sorting.
      const all = [...summaries.flatMap((summary) => readResults(summary.dir))];
      await page.selectOption("#filter-status", "errored");
      assert.equal(await rows.count(), all.filter((result) => result.status === "errored").length);
      await page.selectOption("#filter-status", "");
      await page.fill("#filter-text", "ALERT(1)");
      await page.waitForFunction(() => document.querySelectorAll("#episode-list .row").length === 1);
      assert.equal(await page.locator("#count").innerText(), "1 of 16 episodes");
      await page.fill("#filter-text", "");
      await page.fill("#filter-min", "0.5");
      const atLeastHalf = all.filter((result) => typeof result.reward === "number" && result.reward >= 0.5).length;
      assert.ok(atLeastHalf > 0 && atLeastHalf < 15);
      assert.equal(await rows.count(), atLeastHalf);
      await page.fill("#filter-min", "");
      await page.selectOption("#filter-run", { label: `mock · scripted-oracle · ${summaries[0]!.runId} (4)` });
      assert.equal(await rows.count(), 4);
      await page.selectOption("#filter-run", "");
      await page.selectOption("#sort", "reward:asc");
      const lowest = Math.min(...all.flatMap((result) => (typeof result.reward === "number" ? [result.reward] : [])));
      assert.match(await rows.first().innerText(), new RegExp(`reward ${lowest.toFixed(3)}`));
      assert.match(await rows.last().innerText(), /reward —/, "errored episodes sort last");

      await page.selectOption("#sort", "formatErrors:desc");
      await rows.first().click();
      assert.ok((await detail.locator(".section", { hasText: /Format errors \(\d+\)/ }).count()) === 1);
      await page.keyboard.press("ArrowDown");
      assert.equal(await page.locator(".row.selected").count(), 1);
      assert.equal(await rows.nth(1).getAttribute("class"), "row scored selected");
      const screenshot = join(root, "viewer.png");
      await page.screenshot({ path: screenshot });
      assert.ok(statSync(screenshot).size > 20_000, "the screenshot has content");
      assert.deepEqual(problems, []);
      assert.deepEqual(requests, [url], "the page loads nothing but itself");
    });
  });
});
