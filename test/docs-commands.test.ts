// The code blocks of README.md and every docs/*.md page, run in order as a new user would, on one fresh copy
// of the repository: each must exit 0. Blocks marked `<!-- readme-test: skip (why) -->` (a model server, a
// GPU, files the reader brings) are listed, never run; every other bash block runs. The README runs first,
// then the pages in name order, in the same copy, so a page may use what the README's tour wrote.
//
// Each toolgym command's first `npx toolgym COMMAND` is a process of its own, as a user runs it (npx, the
// package's bin, tsx; it must exit by itself). Later runs of that command go to one long-lived CLI host
// (test/support/cli-host.ts) that runs them with the same main(): node's start and loading the CLI, about
// 2 s of CPU each, were most of this test's time.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describe, it } from "node:test";
import { freshCopy, strayFiles } from "./support/fresh-copy.ts";

const root = resolve(import.meta.dirname, "..");
const README_MAX_LINES = 250;

interface Block {
  file: string;
  line: number;
  code: string;
  skip: string | null;
}

/** The ```bash blocks of a markdown file, each with the skip reason of a marker on the last non-blank line before it. */
function bashBlocks(file: string): Block[] {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (lines[index]?.trim() !== "```bash") continue;
    let previous = index - 1;
    while (previous >= 0 && lines[previous]?.trim() === "") previous--; // a blank line may sit between marker and block
    const marker = /<!--\s*readme-test:\s*skip\s*\(([^)]*)\)\s*-->/.exec(lines[previous] ?? "");
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && lines[end]?.trim() !== "```") body.push(lines[end++] as string);
    blocks.push({ file, line: index + 1, code: body.join("\n"), skip: marker ? (marker[1] as string) : null });
    index = end;
  }
  return blocks;
}

/** README.md, then every page of docs/ (not the result files under docs/results/), in name order. */
function documents(): string[] {
  const pages = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...pages];
}

/**
 * `npx` for the blocks: a toolgym command's first run is the real npx; later runs go to the CLI host. Anything
 * else (and `npx toolgym` alone) is npx itself. Returns the environment the blocks run with.
 */
async function withCliHost(copy: string, work: string, onStop: (stop: () => void) => void): Promise<NodeJS.ProcessEnv> {
  const realNpx = spawnSync("sh", ["-c", "command -v npx"], { encoding: "utf8" }).stdout.trim();
  assert.ok(realNpx, "npx is on PATH");
  const bin = join(work, "bin");
  mkdirSync(bin);
  const seen = join(work, "commands-run-for-real");
  writeFileSync(seen, "");
  writeFileSync(
    join(bin, "npx"),
    [
      "#!/bin/sh",
      'if [ "$1" = toolgym ] && [ -n "$2" ]; then',
      '  if grep -qxF -- "$2" "$TOOLGYM_DOCS_SEEN"; then shift; exec "$TOOLGYM_NODE" "$TOOLGYM_CLI_CLIENT" "$@"; fi',
      '  printf \'%s\\n\' "$2" >>"$TOOLGYM_DOCS_SEEN"',
      "fi",
      'exec "$TOOLGYM_REAL_NPX" "$@"',
      "",
    ].join("\n"),
  );
  chmodSync(join(bin, "npx"), 0o755);
  const socket = join(work, "cli-host.sock");
  // The host's own output goes to a file: a full pipe would stall it while this process waits in spawnSync.
  const log = openSync(join(work, "cli-host.log"), "w");
  // The copy's own CLI, as `npx toolgym` there runs it: files git ignores here (.venv, .cache) stay out of sight.
  const host = spawn(process.execPath, ["--import", "tsx", join(copy, "test/support/cli-host.ts"), socket], { cwd: copy, stdio: ["pipe", "pipe", log] });
  onStop(() => host.stdin?.end());
  const [ready] = (await Promise.race([once(host.stdout!, "data"), once(host, "exit")])) as [unknown];
  assert.match(String(ready), /^ready/, `the CLI host started: ${readFileSync(join(work, "cli-host.log"), "utf8")}`);
  return {
    ...process.env,
    PATH: `${bin}:${process.env.PATH ?? ""}`,
    TOOLGYM_REAL_NPX: realNpx,
    TOOLGYM_NODE: process.execPath,
    TOOLGYM_DOCS_SEEN: seen,
    TOOLGYM_CLI_CLIENT: join(copy, "test/support/cli-host-client.mjs"),
    TOOLGYM_CLI_HOST: socket,
  };
}

/** Relative links to markdown files (`[text](docs/x.md#anchor)`), each with its anchor ("" when none). */
function markdownLinks(file: string): { target: string; anchor: string }[] {
  const text = readFileSync(join(root, file), "utf8");
  return [...text.matchAll(/\]\(([^)\s#:]+\.md)(?:#([^)\s]*))?\)/g)].map((match) => ({ target: match[1] as string, anchor: match[2] ?? "" }));
}

/** GitHub's heading anchors of a markdown file: lower case, punctuation other than hyphens dropped, spaces to hyphens. */
function headingAnchors(path: string): Set<string> {
  const headings = readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => /^#{1,6} /.test(line));
  return new Set(
    headings.map((line) =>
      line
        .replace(/^#+ /, "")
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/ /g, "-"),
    ),
  );
}

describe("README and docs/", () => {
  const blocks = documents().flatMap(bashBlocks);

  it("keeps the README a front page: at most 250 lines, linking to every docs/ page; every link and anchor resolves", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const lines = readme.split("\n").length - (readme.endsWith("\n") ? 1 : 0);
    assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines; at most ${README_MAX_LINES}: move detail into a docs/ page`);
    const linked = new Set(markdownLinks("README.md").map((link) => link.target));
    for (const page of documents().slice(1)) assert.ok(linked.has(page), `README.md links to ${page}`);
    for (const file of documents())
      for (const { target, anchor } of markdownLinks(file)) {
        const path = join(root, dirname(file), target);
        assert.ok(existsSync(path), `${file} links to ${target}, which does not exist`);
        if (anchor) assert.ok(headingAnchors(path).has(anchor), `${file} links to ${target}#${anchor}, a heading ${target} does not have`);
      }
  });

  it("marks every block it does not run with the reason", () => {
    assert.ok(blocks.filter((block) => block.file === "README.md").length >= 3, "the README has its bash blocks");
    for (const block of blocks.filter((candidate) => candidate.skip !== null)) assert.ok((block.skip as string).length > 5, `${block.file}:${block.line}`);
    const run = blocks
      .filter((block) => block.skip === null)
      .map((block) => block.code)
      .join("\n");
    for (const command of [
      "toolgym list",
      "toolgym audit",
      "toolgym eval --suite quick",
      "toolgym report",
      "toolgym view",
      "toolgym export",
      "toolgym score",
      "toolgym sft tau2",
      "toolgym dataset",
    ])
      assert.ok(run.includes(command), `the docs run ${command}`);
  });

  it("runs every other block, in order, on one fresh copy; each exits 0 and leaves git status clean", { timeout: 20 * 60_000 }, async (context) => {
    const { copy, copied } = freshCopy(root, "toolgym-docs-");
    const work = mkdtempSync(join(tmpdir(), "toolgym-docs-host-"));
    context.after(() => rmSync(copy, { recursive: true, force: true }));
    context.after(() => rmSync(work, { recursive: true, force: true }));
    const env = await withCliHost(copy, work, (stop) => context.after(stop));
    const seen = new Set<string>();
    let stdout = "";
    for (const block of blocks.filter((candidate) => candidate.skip === null)) {
      // A command two pages both show runs once: the second would only repeat (or refuse to overwrite) the first's output.
      if (seen.has(block.code.trim())) continue;
      seen.add(block.code.trim());
      const result = spawnSync("bash", ["-e", "-o", "pipefail", "-c", block.code], {
        cwd: copy,
        encoding: "utf8",
        timeout: 10 * 60_000,
        env: { ...env, npm_config_update_notifier: "false" },
      });
      const where = `${block.file}:${block.line}`;
      assert.equal(result.status, 0, `${where} exited ${result.status}\n${block.code}\n--- stderr\n${result.stderr.slice(-3000)}`);
      assert.doesNotMatch(result.stderr, /\n\s+at .+:\d+:\d+\)?\n/, `${where} printed a stack trace`);
      stdout += result.stdout;
    }
    // What the tour promises, checked on its outputs.
    assert.match(stdout, /MuSiQue/, "the model card names the seed's benchmarks");
    // The scripted oracle answers with the gold answer, so the official scorer gives it full marks.
    assert.match(stdout, /"answer_f1": 1\.0/);
    assert.ok(existsSync(join(copy, "trajectories.html")));
    const predictions = readFileSync(join(copy, "preds.jsonl"), "utf8").trim().split("\n");
    assert.equal(predictions.length, 40, "one MuSiQue prediction per sample question");
    assert.ok(existsSync(join(copy, "sft.parquet")) && existsSync(join(copy, "sft.parquet.report.json")));
    assert.ok(existsSync(join(copy, "prompts.parquet")));
    // Every output lands under runs/ or in a file .gitignore names: a checkout that followed the docs shows no
    // untracked file (issue 37: 11 of them, which this test then copied and the docs refused to overwrite).
    assert.deepEqual(strayFiles(copy, copied), [], "files the docs wrote that .gitignore does not cover; write them under runs/");
  });
});
