import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { parseConfig } from "../src/core/index.ts";
import { SegmentTokenizer } from "../src/data/tokenizer.ts";
import { getEnvironment } from "../src/envs/registry.ts";
import { qwen3TokenizerDir, qwen3TokenizerJsonPath, requirePython } from "./support/qwen3.ts";
import { runCli } from "./support/run-cli.ts";
import { runPython } from "./sft-python.ts";

/**
 * The tiny pipeline's domain vocabulary: `toolgym sft conversations` writes the tokenizer corpus,
 * scripts/make-tiny-qwen3.py trains a small byte-level BPE on it that keeps Qwen3's added tokens and chat
 * template, and the rows `toolgym sft trajectories` tokenises in JavaScript equal Python transformers'
 * own rendering and tokenisation with that tokenizer (TRL and transformers serve use the Python one).
 */
const ROOT = resolve(import.meta.dirname, "..");
const SMALL_WORLD = {
  worldSize: 15,
  minHops: 1,
  maxHops: 1,
  impossibleRate: 0,
  familyWeights: { lookup: 0, update: 1, link: 0, copy: 0, conditional: 0, composite: 0 },
};
type Row = { input_ids: number[]; labels: number[] };
const readRows = (path: string) =>
  readFileSync(path, "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Row);

describe("the tiny pipeline's domain vocabulary", () => {
  const work = mkdtempSync(join(tmpdir(), "toolgym-tiny-vocabulary-"));
  after(() => rmSync(work, { recursive: true, force: true }));

  it("trains a small BPE on toolgym conversations that Python and toolgym tokenise identically", { timeout: 600_000 }, async () => {
    const runs = join(work, "runs");
    for (const agent of ["oracle", "noisy_oracle_0.3"]) {
      const evaluated = await runCli([
        "eval",
        "--env",
        "search_plan_act",
        "--agent",
        agent,
        "--split",
        "train",
        "--n",
        "6",
        "--config",
        JSON.stringify(SMALL_WORLD),
        "--out",
        runs,
        "--quiet",
      ]);
      assert.equal(evaluated.code, 0, evaluated.stderr);
    }

    const corpus = join(work, "corpus.jsonl");
    const written = await runCli(["sft", "conversations", runs, "--out", corpus]);
    assert.equal(written.code, 0, written.stderr);
    assert.match(written.stdout, /wrote 12 conversations/);
    const conversations = readFileSync(corpus, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { messages: Array<Record<string, any>>; tools: unknown[] }); // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.equal(conversations.length, 12);
    const first = conversations[0]!;
    assert.deepEqual(
      first.messages.slice(0, 2).map((message) => message.role),
      ["system", "user"],
    );
    assert.equal(first.messages.at(-1)?.role, "tool", "the whole episode, through the last tool result");
    assert.equal(typeof first.messages[2]?.tool_calls[0].function.arguments, "object", "tool-call arguments as the chat template receives them");
    assert.deepEqual(
      (first.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name),
      ["search", "read_record", "update_record", "link_records", "finish"],
    );

    const python = requirePython();
    const model = join(work, "model");
    // A 1-layer model on the domain vocabulary after 20 copying steps
    const makeTiny = (out: string, ...extra: string[]) =>
      runPython(python, [
        join(ROOT, "scripts/make-tiny-qwen3.py"),
        out,
        "--corpus",
        corpus,
        "--vocab-size",
        "4096",
        "--hidden-size",
        "32",
        "--layers",
        "1",
        "--induction-steps",
        "20",
        ...extra,
      ]);
    // 20 steps teach no copying; target 0 lets the build go on to check the rest
    const made = await makeTiny(model, "--copy-target", "0", "--pretrain-steps", "10");
    assert.equal(made.status, 0, made.stderr);
    const report = JSON.parse(made.stdout.trim().split("\n").at(-1)!) as {
      vocabSize: number;
      inductionSteps: number;
      copyAccuracy: number;
      pretrainSteps: number;
    };
    const vocabSize = report.vocabSize;
    // Copying first, then the conversations (what the tiny preset's base model goes through).
    assert.equal(report.inductionSteps, 20);
    assert.ok(report.copyAccuracy >= 0 && report.copyAccuracy <= 1, `copy accuracy ${report.copyAccuracy}`);
    assert.ok(made.stderr.indexOf("induction step 20/20") < made.stderr.indexOf("pretrain step 10/10"), made.stderr);

    // Qwen3's 26 added tokens, same text and special flags, in order right after the BPE vocabulary.
    const qwen = JSON.parse(readFileSync(qwen3TokenizerJsonPath(), "utf8")) as { added_tokens: Array<{ id: number; content: string; special: boolean }> };
    const small = JSON.parse(readFileSync(join(model, "tokenizer.json"), "utf8")) as {
      added_tokens: Array<{ id: number; content: string; special: boolean }>;
      model: { vocab: Record<string, number> };
    };
    const learnt = Object.keys(small.model.vocab).length;
    assert.ok(learnt > 256 && learnt + 26 <= 4096, `${learnt} BPE entries within --vocab-size`);
    assert.equal(vocabSize, Math.ceil((learnt + 26) / 64) * 64, "the embedding has a row per token, padded to a multiple of 64");
    assert.deepEqual(
      small.added_tokens.map(({ content, special }) => ({ content, special })),
      qwen.added_tokens.map(({ content, special }) => ({ content, special })),
    );
    assert.deepEqual(
      small.added_tokens.map((token) => token.id),
      small.added_tokens.map((_, index) => learnt + index),
    );
    assert.equal(readFileSync(join(model, "chat_template.jinja"), "utf8"), readFileSync(join(ROOT, "assets/qwen3/chat_template.jinja"), "utf8"));
    // Qwen3-4B's published generation defaults: `transformers serve` samples only when do_sample is on
    const generation = JSON.parse(readFileSync(join(model, "generation_config.json"), "utf8")) as Record<string, unknown>;
    assert.deepEqual(
      { do_sample: generation.do_sample, temperature: generation.temperature, top_k: generation.top_k, top_p: generation.top_p },
      { do_sample: true, temperature: 0.6, top_k: 20, top_p: 0.95 },
    );

    // Rows through toolgym (JavaScript tokenizer) against transformers' rendering and tokenisation.
    const out = join(work, "rows.jsonl");
    const rows = await runCli(["sft", "trajectories", runs, "--model-dir", model, "--out", out, "--enable-thinking", "false"]);
    assert.equal(rows.code, 0, rows.stderr);
    const produced = readRows(out);
    const env = getEnvironment("search_plan_act");
    const tools = join(work, "tools.json");
    writeFileSync(
      tools,
      JSON.stringify(env.start(env.generate({ split: "train", seed: 0, index: 0, config: parseConfig(env.id, env.configSchema, SMALL_WORLD) })).tools),
    );
    const expected: Array<{ input_ids: number[]; prompt_length: number }> = [];
    for (const agent of ["oracle", "noisy_oracle_0.3"]) {
      const parent = join(runs, `search_plan_act--scripted-${agent}`);
      const reference = await runPython(python, [
        join(ROOT, "test/fixtures/pipeline/render_turns.py"),
        join(parent, readdirSync(parent)[0]!, "results.jsonl"),
        tools,
        model,
      ]);
      assert.equal(reference.status, 0, reference.stderr);
      expected.push(...(JSON.parse(reference.stdout) as typeof expected));
    }
    assert.equal(produced.length, expected.length);
    const sortKey = (ids: number[]) => ids.join(",");
    const wanted = new Set(expected.map((row) => sortKey(row.input_ids)));
    for (const row of produced) assert.ok(wanted.has(sortKey(row.input_ids)), "every toolgym row equals a transformers rendering");

    // The point of the vocabulary: rows several times shorter than with the real Qwen3 tokenizer.
    const real = join(work, "rows-qwen3.jsonl");
    assert.equal((await runCli(["sft", "trajectories", runs, "--model-dir", qwen3TokenizerDir(), "--out", real, "--enable-thinking", "false"])).code, 0);
    const length = (list: Row[]) => list.reduce((sum, row) => sum + row.input_ids.length, 0);
    assert.ok(length(produced) * 3 < length(readRows(real)), `${length(produced)} tokens vs ${length(readRows(real))} with Qwen3's vocabulary`);

    // A value, a name or a code is tokenised the same wherever it appears, so copying it copies the same ids.
    const tokenizer = SegmentTokenizer.fromDirectory(model);
    const tokensOf = (value: string, context: [string, string]) => {
      const [before, after] = [tokenizer.encodeUncached(context[0]).length, tokenizer.encodeUncached(context[1]).length];
      const ids = tokenizer.encodeUncached(`${context[0]}${value}${context[1]}`);
      assert.equal(tokenizer.decode(ids.slice(before, ids.length - after)), value, `${value} is tokenised apart from its context`);
      return ids.slice(before, ids.length - after);
    };
    for (const value of ["1192", "BOK-5727", "Veliolmarork Almanac", "2014-03-18"])
      assert.deepEqual(tokensOf(value, ['"pages":', ","]), tokensOf(value, ['{"status": "done", "answer": "', '"}}']), value);

    // At the default target, a build whose copying never gets there stops with the fix instead of a model.
    const weak = join(work, "weak-model");
    const refused = await makeTiny(weak);
    assert.equal(refused.status, 1, refused.stderr);
    assert.match(
      refused.stderr.trim().split("\n").at(-1)!,
      /^make-tiny-qwen3: copying reached 0\.\d\d of 0\.9 within 20 steps.*--seed.*\[TINY_COPYING_UNREACHED\]$/,
    );
    assert.ok(!existsSync(join(weak, "model.safetensors")), "no model is saved");
  });
});
