import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import { modelServerCommand } from "../src/pipeline/processes.ts";
import { qwen3TokenizerDir, requirePython } from "./support/qwen3.ts";

interface Parsed {
  raised?: string;
  content?: string;
  tool_calls?: Array<{ name: string; arguments: string }>;
}

/**
 * python/serve_transformers.py (how the pipeline serves a model on CPU) against transformers' own parsing of a
 * Qwen3 completion, with the real Qwen3 tokenizer: a well-formed call parses the same; a call whose body is
 * not JSON makes transformers raise (an HTTP 500 from `transformers serve`) and comes back from the launcher
 * as the model's text, which toolgym's client then records as a format error.
 */
describe("serve_transformers.py", () => {
  it("parses well-formed calls like transformers and returns a malformed call as text instead of raising", () => {
    const output = execFileSync(requirePython(), [resolve(import.meta.dirname, "../python/tests/check_serve_transformers.py"), qwen3TokenizerDir()], {
      encoding: "utf8",
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
      timeout: 300_000,
    });
    const report = JSON.parse(output.trim().split("\n").at(-1) as string) as {
      patched: boolean;
      strict: { well_formed: Parsed; malformed: Parsed };
      launcher: { well_formed: Parsed; malformed: Parsed };
    };
    assert.equal(report.patched, true, "importing the launcher replaces the chat completion handler's parser");
    const call = { name: "update_record", arguments: '{"id": "WRD-1917", "value": "closed"}' };
    assert.deepEqual(report.strict.well_formed, { content: "", tool_calls: [call] });
    assert.deepEqual(report.launcher.well_formed, { content: "", tool_calls: [call] });
    assert.deepEqual(report.strict.malformed, { raised: "ValueError" }, "transformers itself refuses the malformed call");
    assert.deepEqual(report.launcher.malformed, {
      content: '<tool_call>\n{"name": "update_record", "arguments": {"id": "WRD-1917", "value": closed"}}\n</tool_call>',
      tool_calls: [],
    });
  });

  it("is the command the pipeline serves a model (or, unpinned, every model of a stage) with on CPU; vLLM keeps its own CLI", () => {
    const command = modelServerCommand("transformers", "/venv/bin/python", "/models/m", 8000, ["--x"]);
    assert.deepEqual(command, [
      "/venv/bin/python",
      resolve(import.meta.dirname, "../python/serve_transformers.py"),
      "/models/m",
      "--host",
      "127.0.0.1",
      "--port",
      "8000",
      "--device",
      "cpu",
      "--default-seed",
      "0",
      "--x",
    ]);
    // No model: one server loads each request's model by name (the pipeline's evaluation stages).
    assert.deepEqual(modelServerCommand("transformers", "/venv/bin/python", undefined, 8000, []).slice(2, 5), ["--host", "127.0.0.1", "--port"]);
    assert.throws(() => modelServerCommand("vllm", "/venv/bin/python", undefined, 8000, []), /vllm serve needs the model/);
    assert.deepEqual(modelServerCommand("vllm", "/venv/bin/python", "/models/m", 8000, []).slice(1), [
      "serve",
      "/models/m",
      "--host",
      "127.0.0.1",
      "--port",
      "8000",
    ]);
  });
});
