// The layering the developers' guide asks for, checked on the import statements of src/ (test files aside):
// cli/ is the thin top, so nothing below it imports it (issue 37: the pipeline ran `toolgym` steps by importing
// cli/main.ts; it now takes a runner from its caller), and environments do not import the evaluation harness
// (statistics live in src/statistics/, below both).
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { it } from "node:test";

const src = resolve(import.meta.dirname, "..", "src");

function sourceFiles(directory: string, found: string[] = []): string[] {
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) sourceFiles(path, found);
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts")) found.push(path);
  }
  return found;
}

/** Each relative module a file imports (static, `export … from`, or dynamic `import("…")`), as a path under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm)].map((match) => match[1] as string);
  return specifiers.map((specifier) => relative(src, resolve(dirname(file), specifier)));
}

/** `[file, imported]` pairs where a file under `from` imports a module under `to`. */
function crossings(from: (file: string) => boolean, to: string): string[] {
  return sourceFiles(src)
    .map((file) => relative(src, file))
    .filter(from)
    .flatMap((file) =>
      importsOf(join(src, file))
        .filter((imported) => imported.startsWith(`${to}/`))
        .map((imported) => `${file} → ${imported}`),
    );
}

it("the import scan sees static, re-exported and dynamic imports", () => {
  assert.ok(importsOf(join(src, "cli/main.ts")).includes("cli/commands/pipeline.ts"));
  assert.ok(importsOf(join(src, "cli/commands/pipeline.ts")).includes("cli/main.ts"), 'its lazy import("../main.ts")');
  assert.ok(importsOf(join(src, "core/index.ts")).includes("core/errors.ts"), "export * from");
});

it("nothing outside src/cli imports src/cli", () => {
  assert.deepEqual(
    crossings((file) => !file.startsWith("cli/"), "cli"),
    [],
  );
});

it("environments do not import the evaluation harness", () => {
  assert.deepEqual(
    crossings((file) => file.startsWith("envs/"), "eval"),
    [],
  );
});
