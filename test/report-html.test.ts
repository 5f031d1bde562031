import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { withWatchedPage } from "./support/chromium.ts";
import { runCli, writeSyntheticRun } from "./report-support.ts";

describe("report: the HTML report in headless Chromium", () => {
  let root: string;
  let htmlFile: string;
  before(async () => {
    root = mkdtempSync(join(tmpdir(), "toolgym-html-"));
    const runs = join(root, "runs");
    for (const [label, shift] of [
      ["base", 0],
      ["trained", 0.25],
    ] as const) {
      writeSyntheticRun({
        root: runs,
        benchmark: "qa",
        label,
        metrics: ["em", "f1"],
        episodes: Array.from({ length: 60 }, (_, i) => {
          const em = (i * 7) % 10 < 4 + shift * 10 ? 1 : 0;
          return {
            metrics: { em, f1: em ? 1 : 0.3, reward: em ? 1 : 0.3, supporting_read: i % 3 === 0 ? 0 : 1 },
            turns: 2 + ((i + label.length) % 6),
            errored: label === "trained" && i === 59,
          };
        }),
      });
      writeSyntheticRun({
        root: runs,
        benchmark: "plan",
        label,
        metrics: ["reward"],
        episodes: Array.from({ length: 40 }, (_, i) => {
          const outcome = (i % 5) / 4;
          return { metrics: { reward: 0.8 * outcome + 0.2 * (1 - shift), outcome, grounding: 1 - shift, stop: 1 }, turns: 4 + (i % 9) };
        }),
      });
    }
    htmlFile = join(root, "report.html");
    const result = await runCli(["report", runs, "--format", "html", "--out", htmlFile]);
    assert.equal(result.code, 0, result.stderr);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("is one self-contained file: no scripts, no external resources", () => {
    const html = readFileSync(htmlFile, "utf8");
    assert.match(html, /^<!doctype html>/);
    assert.doesNotMatch(html, /<script|<link|src=|https?:\/\/(?!www\.w3\.org\/2000\/svg)/i);
    assert.ok((html.match(/<svg /g) ?? []).length >= 6, "metric, component and turn charts are inline SVG");
  });

  it("renders without console errors and shows the table and the plots", async () => {
    await withWatchedPage({ file: htmlFile, viewport: { width: 1280, height: 900 } }, async ({ page, url, problems, requests }) => {
      const table = page.locator("table#results");
      assert.ok(await table.isVisible(), "the results table is visible");
      assert.equal(await table.locator("tbody tr").count(), 3, "qa EM, qa F1, plan reward");
      const text = (await table.innerText()).replace(/\s+/g, " ");
      assert.match(text, /qa EM 0\.\d{3} \[0\.\d{3}, 0\.\d{3}\] \(n=60\) 0\.\d{3} \[0\.\d{3}, 0\.\d{3}\] \(n=59, 1 errored\)/);
      assert.match(text, /plan mean reward .* significant decrease \(Δ = −0\.050/);
      const charts = page.locator("svg.chart");
      assert.equal(await charts.count(), 3 + 2 + 2, "one bar chart per row, one component and one turn chart per benchmark");
      for (let index = 0; index < (await charts.count()); index++) {
        const chart = charts.nth(index);
        assert.ok(await chart.isVisible(), `chart ${index} is visible`);
        const box = await chart.boundingBox();
        assert.ok(box && box.width > 100 && box.height > 100, `chart ${index} has a size`);
        assert.ok((await chart.locator("rect.bar").count()) > 0, `chart ${index} has bars`);
      }
      assert.equal(await page.locator("#metric-charts path.whisker").count(), 6, "CI whiskers for 3 rows × 2 models");
      const screenshot = join(root, "report.png");
      await page.screenshot({ path: screenshot, fullPage: true });
      assert.ok(statSync(screenshot).size > 20_000, "the screenshot has content");
      assert.deepEqual(problems, []);
      assert.deepEqual(requests, [url], "the page loads nothing but itself");
    });
  });
});
