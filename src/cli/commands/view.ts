import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Command } from "commander";
import { DEFAULT_VIEW_LIMIT, loadViewerData } from "../../web/viewer-data.ts";
import { renderViewerHtml } from "../../web/viewer-html.ts";
import type { CommandContext } from "../io.ts";
import { parseInteger, parseText, requireDirectory } from "../options.ts";
import { FORCE_OPTION, STDOUT, checkOutputPath, writeOutputAtomically } from "../output-file.ts";

interface ViewCommandOptions {
  force?: boolean;
  out: string;
  limit: number;
}

export function registerView(program: Command, { io }: CommandContext): void {
  program
    .command("view")
    .description("Write one self-contained offline HTML page to browse the episodes of eval runs: filters, reward breakdowns, full conversations.")
    .argument("<run-dirs...>", "run directories, or folders holding them (searched 4 levels deep)")
    .option("--out <file>", "HTML file to write ('-' for stdout)", parseText("--out"), "trajectories.html")
    .option(...FORCE_OPTION)
    .option("--limit <n>", "episodes read per run", parseInteger("--limit", { min: 1 }), DEFAULT_VIEW_LIMIT)
    .action(async (runDirectories: string[], options: ViewCommandOptions) => {
      for (const directory of runDirectories) requireDirectory("run directory", directory);
      if (options.out !== STDOUT) checkOutputPath(options.out, { force: options.force });
      const data = await loadViewerData(runDirectories, { limit: options.limit });
      const html = renderViewerHtml(data);
      if (options.out === STDOUT) return void io.stdout.write(html);
      await writeOutputAtomically(options.out, (path) => writeFileSync(path, html), { force: options.force });
      const megabytes = (Buffer.byteLength(html) / 1e6).toFixed(1);
      io.stderr.write(
        `viewer written to ${options.out} (${data.episodes.length} episodes from ${data.runs.length} run${data.runs.length === 1 ? "" : "s"}, ${megabytes} MB); open ${pathToFileURL(resolve(options.out)).href}\n`,
      );
    });
}
