// The checkout as a fresh clone would have it, for tests that run the docs as a new user would
// (test/docs-commands.test.ts), and the check that following the docs leaves `git status` clean.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

function gitFiles(cwd: string, args: string[]): string[] {
  const listed = spawnSync("git", ["ls-files", "-z", ...args], { cwd, encoding: "utf8" });
  if (listed.status !== 0) throw new Error(`git ls-files ${args.join(" ")} failed in ${cwd}: ${listed.stderr}`);
  return listed.stdout.split("\0").filter(Boolean);
}

/**
 * A copy of `root`'s tracked files, plus the untracked files git does not ignore below a folder (a new page,
 * source file or fixture not yet committed), with `root`'s node_modules linked in. Untracked files at the top
 * level are left out: that is where a command run in the checkout drops its output, and a copied leftover made
 * the docs' own command refuse to overwrite it (issue 37). Returns the copy and the files copied into it.
 */
export function freshCopy(root: string, prefix = "toolgym-copy-"): { copy: string; copied: Set<string> } {
  const copy = mkdtempSync(join(tmpdir(), prefix));
  const untracked = gitFiles(root, ["--others", "--exclude-standard"]).filter((file) => file.includes("/"));
  const copied = new Set<string>();
  for (const file of [...gitFiles(root, ["--cached"]), ...untracked]) {
    const source = join(root, file);
    if (!existsSync(source)) continue; // deleted in the working tree, not yet committed
    if (file === "node_modules" || file.startsWith("node_modules/")) continue; // a worktree's link to another checkout's; linked below
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(source, join(copy, file));
    copied.add(file);
  }
  // `npm ci` is the README's first step; installing again here would only repeat it.
  symlinkSync(join(root, "node_modules"), join(copy, "node_modules"), "dir");
  return { copy, copied };
}

/**
 * Files in `copy` that were not copied into it and that its .gitignore does not cover: what `git status` would
 * show as untracked in a checkout after the same commands. The copy becomes a git repository to ask git.
 */
export function strayFiles(copy: string, copied: ReadonlySet<string>): string[] {
  const init = spawnSync("git", ["init", "-q"], { cwd: copy, encoding: "utf8" });
  if (init.status !== 0) throw new Error(`git init failed in ${copy}: ${init.stderr}`);
  return gitFiles(copy, ["--others", "--exclude-standard"]).filter((file) => !copied.has(file) && file !== "node_modules");
}
