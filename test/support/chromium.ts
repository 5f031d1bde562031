import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { missingForTests } from "./qwen3.ts";

/** Debian's chromium (installed by `npm test` when missing), driven by playwright-core without a downloaded browser. */
export const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path));

/** Launch flags that keep Chromium off the (closed) network of the project machines. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

/** The Chromium executable; a missing browser fails the test (`npm test` installs it first). */
export function requireChromium(): string {
  if (CHROMIUM === undefined) throw missingForTests("Debian chromium (/usr/bin/chromium)");
  return CHROMIUM;
}

export interface WatchedPage {
  page: Page;
  url: string;
  /** Console errors, page errors and dialogs seen so far. */
  problems: string[];
  /** Every URL the page requested. */
  requests: string[];
}

/**
 * Launches headless Chromium, opens `file` with console errors, page errors, dialogs and requests recorded,
 * runs `check`, and always closes the browser.
 */
export async function withWatchedPage(
  options: { file: string; viewport: { width: number; height: number } },
  check: (watched: WatchedPage) => Promise<void>,
): Promise<void> {
  const { chromium } = await import("playwright-core");
  const browser: Browser = await chromium.launch({ executablePath: requireChromium(), headless: true, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: options.viewport });
    const problems: string[] = [];
    const requests: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("dialog", (dialog) => {
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on("request", (request) => requests.push(request.url()));
    const url = pathToFileURL(options.file).href;
    await page.goto(url, { waitUntil: "load" });
    await check({ page, url, problems, requests });
  } finally {
    await browser.close();
  }
}
