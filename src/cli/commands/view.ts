import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Command } from "commander";
import { DEFAULT_VIEW_LIMIT, loadViewerData } from "../../web/viewer-data.ts";
import { renderViewerHtml } from "../../web/viewer-html.ts";
import { parseInteger } from "../options.ts";

interface ViewCommandOptions {
  out: string;
  limit: number;
}

export function registerView(program: Command): void {
  program
    .command("view")
    .description("Write one self-contained offline HTML page to browse the episodes of eval runs: filters, reward breakdowns, full conversations.")
    .argument("<run-dirs...>", "run directories, or folders holding them (searched 4 levels deep)")
    .option("--out <file>", "HTML file to write ('-' for stdout)", "trajectories.html")
    .option("--limit <n>", `episodes read per run (default ${DEFAULT_VIEW_LIMIT})`, parseInteger("--limit"), DEFAULT_VIEW_LIMIT)
    .action(async (runDirectories: string[], options: ViewCommandOptions) => {
      const data = await loadViewerData(runDirectories, { limit: options.limit });
      const html = renderViewerHtml(data);
      if (options.out === "-") {
        process.stdout.write(html);
        return;
      }
      mkdirSync(dirname(resolve(options.out)), { recursive: true });
      writeFileSync(options.out, html);
      const megabytes = (Buffer.byteLength(html) / 1e6).toFixed(1);
      process.stderr.write(
        `viewer written to ${options.out} (${data.episodes.length} episodes from ${data.runs.length} run${data.runs.length === 1 ? "" : "s"}, ${megabytes} MB); open ${pathToFileURL(resolve(options.out)).href}\n`,
      );
    });
}
