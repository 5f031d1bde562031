// test/support/fresh-copy.ts on a small git repository: what the docs test copies, and what it calls stray.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, it } from "node:test";
import { freshCopy, strayFiles } from "./support/fresh-copy.ts";

const made: string[] = [];
after(() => {
  for (const path of made) rmSync(path, { recursive: true, force: true });
});

function write(root: string, file: string, text = "x\n"): void {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), text);
}

function git(root: string, ...args: string[]): void {
  const result = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: root, encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
}

it("copies tracked files and new files below a folder; leaves out ignored files and leftovers at the top level", () => {
  const root = mkdtempSync(join(tmpdir(), "toolgym-fresh-copy-root-"));
  made.push(root);
  git(root, "init", "-q");
  write(root, ".gitignore", "/runs/\n/preds.jsonl\nnode_modules\n");
  write(root, "README.md");
  write(root, "src/a.ts");
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "first");
  write(root, "src/new.ts"); // a new source file, not yet committed
  write(root, "docs-report.json"); // a leftover of following the docs in the checkout
  write(root, "preds.jsonl"); // ignored
  write(root, "runs/quick/summary.json"); // ignored
  const { copy, copied } = freshCopy(root);
  made.push(copy);
  assert.deepEqual([...copied].sort(), [".gitignore", "README.md", "src/a.ts", "src/new.ts"]);
  assert.deepEqual(readdirSync(copy).sort(), [".gitignore", "README.md", "node_modules", "src"]);

  write(copy, "runs/docs-report.json"); // under an ignored folder: fine
  write(copy, "preds.jsonl"); // listed in .gitignore: fine
  write(copy, "docs-card.md"); // what the docs must not do
  write(copy, "docs/out.json");
  assert.deepEqual(strayFiles(copy, copied).sort(), ["docs-card.md", "docs/out.json"]);
});
