import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, openSync, readFileSync, readSync, closeSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Locator, Page } from "playwright-core";
import { withWatchedPage } from "./support/chromium.ts";
import { runCli, writeSyntheticRun } from "./report-support.ts";

/** Screenshots are kept (not printed) for whoever inspects the test run; the folder can be moved with TOOLGYM_TEST_ARTEFACTS. */
const ARTEFACTS = join(process.env.TOOLGYM_TEST_ARTEFACTS ?? join(tmpdir(), "toolgym-test-artefacts"), "report-html");

async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTEFACTS, { recursive: true });
  const path = join(ARTEFACTS, name);
  rmSync(path, { force: true });
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** The first eight bytes of every PNG file. */
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function fileHead(path: string, length: number): Buffer {
  const descriptor = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(length);
    readSync(descriptor, buffer, 0, length, 0);
    return buffer;
  } finally {
    closeSync(descriptor);
  }
}

async function texts(locator: Locator): Promise<string[]> {
  return (await locator.allTextContents()).map((text) => text.trim());
}

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
            components: ["em", "f1"],
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
          return {
            // toolCalls (mean 7.875) and searches (mean 15) are diagnostics counts, not reward components.
            metrics: { reward: 0.8 * outcome + 0.2 * (1 - shift), outcome, grounding: 1 - shift, stop: 1, toolCalls: 5 + (i % 7), searches: (i % 4) * 10 },
            components: ["outcome", "grounding", "stop"],
            turns: 4 + (i % 9),
          };
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
      assert.equal(
        await charts.count(),
        3 + 2 + 3 + 2,
        "one bar chart per row, one component chart per benchmark, one per count, one turn chart per benchmark",
      );
      for (let index = 0; index < (await charts.count()); index++) {
        const chart = charts.nth(index);
        assert.ok(await chart.isVisible(), `chart ${index} is visible`);
        const box = await chart.boundingBox();
        assert.ok(box && box.width > 100 && box.height > 100, `chart ${index} has a size`);
        assert.ok((await chart.locator("rect.bar").count()) > 0, `chart ${index} has bars`);
      }
      assert.equal(await page.locator("#metric-charts path.whisker").count(), 6, "CI whiskers for 3 rows × 2 models");
      assert.ok(statSync(await saveScreenshot(page, "report.png")).size > 20_000, "the screenshot has content");
      assert.deepEqual(problems, []);
      assert.deepEqual(requests, [url], "the page loads nothing but itself");
    });
  });

  it("plots reward components on a fixed 0 to 1 axis and diagnostics counts in charts of their own", async () => {
    await withWatchedPage({ file: htmlFile, viewport: { width: 1280, height: 900 } }, async ({ page, problems }) => {
      const components = page.locator("#component-charts svg.chart");
      assert.equal(await components.count(), 2, "one components chart per benchmark");
      const expected = new Map([
        ["qa — reward components", ["em", "f1"]],
        ["plan — reward components", ["grounding", "outcome", "stop"]],
      ]);
      for (let index = 0; index < 2; index++) {
        const chart = components.nth(index);
        const title = (await chart.locator("text.chart-title").textContent())?.trim() ?? "";
        assert.ok(expected.has(title), `unexpected components chart '${title}'`);
        assert.deepEqual(await texts(chart.locator("text.y-tick")), ["0", "0.25", "0.5", "0.75", "1"], `${title}: the axis runs 0 to 1`);
        assert.deepEqual(await texts(chart.locator("text.x-label")), expected.get(title), `${title}: only reward components`);
      }
      // The rendered geometry agrees: plan's `stop` is 1 for every episode, so its bars reach the "1" gridline.
      const plan = components.filter({ hasText: "plan — reward components" });
      const top = await plan.locator("text.y-tick", { hasText: /^1$/ }).boundingBox();
      const stopBars = plan.locator("rect.bar", { has: page.locator("title", { hasText: /stop: 1\.000/ }) });
      assert.equal(await stopBars.count(), 2, "one stop bar per model");
      const bar = await stopBars.first().boundingBox();
      assert.ok(top && bar && Math.abs(bar.y - (top.y + top.height / 2)) < 4, "a component of 1 reaches the top of the axis");

      const counts = page.locator("#count-charts svg.chart");
      const titles = await texts(counts.locator("text.chart-title"));
      assert.deepEqual(titles.sort(), ["plan — searches", "plan — toolCalls", "qa — supporting_read"]);
      const axisTop = async (title: string) => (await texts(counts.filter({ hasText: title }).locator("text.y-tick"))).at(-1);
      assert.equal(await axisTop("plan — searches"), "20", "searches (mean 15) get their own axis");
      assert.equal(await axisTop("plan — toolCalls"), "10", "tool calls (mean 7.875) get their own axis");
      assert.equal(await axisTop("qa — supporting_read"), "1");
      const componentText = (await page.locator("#component-charts").textContent()) ?? "";
      for (const name of ["toolCalls", "searches", "supporting_read"]) assert.ok(!componentText.includes(name), `${name} is not plotted as a component`);

      const screenshot = await saveScreenshot(page, "report-charts.png");
      assert.ok(statSync(screenshot).size > 20_000, "the screenshot has content");
      assert.deepEqual(fileHead(screenshot, 8), PNG_SIGNATURE, "the screenshot is a PNG");
      assert.deepEqual(problems, []);
    });
  });
});
