// Writes test/fixtures/chat-templates/{cases.json,expected.json}: conversations from the synthetic Tau2
// generator (the inputs), rendered and tokenised ONCE by Python transformers' apply_chat_template (the
// expectations). Run after an intended change of the cases or a transformers upgrade, and review the diff:
//   npx tsx scripts/make-chat-template-fixture.ts
// toolgym's own renderer never writes these files; test/chat-template-fixture.test.ts compares it with them.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pythonJsonDumps } from "../src/python-semantics/index.ts";
import { buildCases } from "../test/support/chat-cases.ts";
import { qwen3TokenizerDir, requirePython } from "../test/support/qwen3.ts";

/** Enough cases for every feature to appear several times, few enough to keep the files small. */
const FIXTURE_CASES = 40;

const root = join(import.meta.dirname, "..");
const directory = join(root, "test/fixtures/chat-templates");
mkdirSync(directory, { recursive: true });
const casesPath = join(directory, "cases.json");
writeFileSync(casesPath, `${pythonJsonDumps(buildCases(FIXTURE_CASES, { stream: "chat-template-fixture", seed: 8, maxContentChars: 240 }))}\n`);
const python = requirePython();
const expectedPath = join(directory, "expected.json");
const run = spawnSync(python, [join(root, "python/crosscheck/render_tokenize.py"), qwen3TokenizerDir(), casesPath, expectedPath], { encoding: "utf8" });
if (run.status !== 0) throw new Error(`render_tokenize.py failed: ${run.stderr.slice(-2000)}`);
const version = spawnSync(python, ["-c", "import transformers; print(transformers.__version__)"], { encoding: "utf8" }).stdout.trim();
process.stderr.write(`wrote ${casesPath} and ${expectedPath} (transformers ${version})\n`);
