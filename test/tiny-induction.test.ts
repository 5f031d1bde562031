/**
 * The copying batches scripts/make-tiny-qwen3.py trains the tiny preset's base model on first
 * (`--induction-steps`): each row a random span of ordinary tokens followed by its repeat, with labels on
 * the repeat from its second token on (its first cannot be predicted), and never an added token.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { qwen3TokenizerDir, requirePython } from "./support/qwen3.ts";

const ROOT = resolve(import.meta.dirname, "..");

const PROBE = `
import importlib.util, json, random, sys, torch
spec = importlib.util.spec_from_file_location("make_tiny", sys.argv[1])
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
ordinary = list(range(300, 700))
input_ids, labels = module.repeated_spans(torch, ordinary, 7, random.Random(3), 12)
from transformers import AutoTokenizer
tokens = module.ordinary_tokens(AutoTokenizer.from_pretrained(sys.argv[2]))
print(json.dumps({"input_ids": input_ids.tolist(), "labels": labels.tolist(), "ordinary": [len(tokens), min(tokens), max(tokens)]}))
`;

// The schedule does not depend on the vocabulary, but the cost of a step does (Qwen3's 151,936-row output head
// is most of it): the model trains on the script's own small domain tokenizer, built from a few sentences.
const SCHEDULE = `
import importlib.util, json, pathlib, sys, tempfile, torch
from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM
spec = importlib.util.spec_from_file_location("make_tiny", sys.argv[1])
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
with tempfile.TemporaryDirectory() as directory:
    out = pathlib.Path(directory)
    module.copy_tokenizer(out)
    module.train_domain_tokenizer(out, ["What is the value of key 'kalo'? Call lookup, then finish with the value."] * 4, 512, 1)
    tokenizer = AutoTokenizer.from_pretrained(out)
vocab_size = -(-len(tokenizer) // 64) * 64
torch.manual_seed(0)
def tiny():
    return Qwen3ForCausalLM(Qwen3Config(vocab_size=vocab_size, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=8))
rates = []
real_step = torch.optim.lr_scheduler.LambdaLR.step
def spy(self, *args, **kwargs):
    real_step(self, *args, **kwargs); rates.append(self.get_last_lr()[0] / 3e-3)
torch.optim.lr_scheduler.LambdaLR.step = spy
steps, _ = module.induction_pretrain(torch, tokenizer, tiny(), 60, batch_size=2, target=2.0)
print(f"unreached: {steps} steps, rate {rates[-1]:.1f}", file=sys.stderr)
rates.clear()
steps, _ = module.induction_pretrain(torch, tokenizer, tiny(), 1000, batch_size=2, target=0.0)
print(json.dumps({"steps": steps, "rate": rates[-1]}))
`;

describe("make-tiny-qwen3.py copying batches", () => {
  it("repeats each span once, labels the repeat after its first token, pads the rest", () => {
    const python = requirePython();
    const result = spawnSync(python, ["-c", PROBE, resolve(ROOT, "scripts/make-tiny-qwen3.py"), qwen3TokenizerDir()], { encoding: "utf8" });
    assert.equal(result.status, 0, result.stderr);
    const {
      input_ids: rows,
      labels,
      ordinary,
    } = JSON.parse(result.stdout.trim().split("\n").at(-1)!) as {
      input_ids: number[][];
      labels: number[][];
      ordinary: [number, number, number];
    };
    assert.equal(rows.length, 12);
    const lengths = new Set<number>();
    rows.forEach((row, index) => {
      const used = row.findIndex((token) => token === 7);
      const length = (used === -1 ? row.length : used) / 2;
      lengths.add(length);
      assert.ok(Number.isInteger(length) && length >= 8 && length <= 40, `span length ${length}`);
      const span = row.slice(0, length);
      assert.deepEqual(row.slice(length, 2 * length), span, "the second half repeats the first");
      assert.ok(
        span.every((token) => token >= 300 && token < 700),
        "only the ordinary tokens given",
      );
      assert.ok(
        row.slice(2 * length).every((token) => token === 7),
        "padding after the repeat",
      );
      const expected = row.map((token, position) => (position > length && position < 2 * length ? token : -100));
      assert.deepEqual(labels[index], expected);
    });
    assert.ok(lengths.size > 1, "span lengths vary");
    // Qwen3: 151,643 BPE tokens (ids 0-151,642), then its 26 added tokens, none of which is ever drawn.
    assert.deepEqual(ordinary, [151643, 0, 151642]);
  });

  it("ends the constant-rate phase at the target accuracy, then decays for a fifth as many steps (at least 50)", () => {
    const python = requirePython();
    const result = spawnSync(python, ["-c", SCHEDULE, resolve(ROOT, "scripts/make-tiny-qwen3.py")], { encoding: "utf8" });
    assert.equal(result.status, 0, result.stderr);
    // Target 0 is met as soon as 50 steps of accuracy exist: step 50, then max(50, 50 / 5) = 50 decay steps.
    assert.deepEqual(JSON.parse(result.stdout.trim().split("\n").at(-1)!), { steps: 100, rate: 0 });
    assert.match(result.stderr, /induction step 50\/100: .*\(reached 0\.0; 50 decay steps follow\)/);
    // Unreached, the phase runs its maximum at the full rate (after 50 warm-up steps).
    assert.match(result.stderr, /unreached: 60 steps, rate 1\.0/);
  });

  // The preset picks the seed whose copying plateau ends within the cap; the script must honour it.
  it("--seed sets the random weights: the same seed gives the same model, another seed another", () => {
    const python = requirePython();
    const work = mkdtempSync(join(tmpdir(), "toolgym-seed-"));
    try {
      const weights = (name: string, seed: number) => {
        const out = join(work, name);
        const result = spawnSync(python, [resolve(ROOT, "scripts/make-tiny-qwen3.py"), out, "--hidden-size", "16", "--layers", "1", "--seed", String(seed)], {
          encoding: "utf8",
        });
        assert.equal(result.status, 0, result.stderr);
        return createHash("sha256")
          .update(readFileSync(join(out, "model.safetensors")))
          .digest("hex");
      };
      const first = weights("a", 1);
      assert.equal(weights("b", 1), first);
      assert.notEqual(weights("c", 2), first);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
