"""Loads a train_grpo.py output back with transformers (merged checkpoint, and base + adapter) and prints JSON.

    python python/tests/check_checkpoint.py OUTPUT_DIR BASE_MODEL_DIR
"""

import json
import sys
from pathlib import Path


def main() -> None:
    output, base = Path(sys.argv[1]), sys.argv[2]
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    merged = AutoModelForCausalLM.from_pretrained(output)
    tokenizer = AutoTokenizer.from_pretrained(output)
    with_adapter = AutoModelForCausalLM.from_pretrained(base)
    with_adapter.load_adapter(str(output / "adapter"))
    ids = tokenizer.apply_chat_template([{"role": "user", "content": "What is the value of key 'kalo'?"}], add_generation_prompt=True, return_tensors="pt", return_dict=True)["input_ids"]
    with torch.no_grad():
        merged_logits = merged(input_ids=ids).logits[0, -1]
        adapter_logits = with_adapter(input_ids=ids).logits[0, -1]
    print(json.dumps({
        "files": sorted(str(path.relative_to(output)) for path in output.rglob("*") if path.is_file() and "checkpoint-" not in str(path)),
        "architecture": merged.config.architectures,
        "max_logit_difference": float((merged_logits - adapter_logits).abs().max()),
        "chat_template_has_tools": "tools" in (tokenizer.chat_template or ""),
    }))


if __name__ == "__main__":
    main()
