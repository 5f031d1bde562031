"""Reference chat-template rendering for the TypeScript cross-check (test/sft-crosscheck.test.ts).

Usage: python render_tokenize.py MODEL_DIR CASES.json OUT.json

CASES.json is a list of {name, messages, tools?, add_generation_prompt, template_kwargs?}. For each case
this writes {name: {"text": ..., "ids": [...]}} using Python transformers itself:
`apply_chat_template(..., tokenize=False)` for the text and `apply_chat_template(..., tokenize=True)` for
the ids (the tokenizer is loaded from the local directory; no hub access).
"""

import json
import sys

from transformers import AutoTokenizer


def token_ids(encoded):
    # transformers 5 returns a BatchEncoding (return_dict=True); older versions a plain list
    if hasattr(encoded, "keys") and "input_ids" in encoded:
        return list(encoded["input_ids"])
    return list(encoded)


def main() -> None:
    model_dir, cases_path, out_path = sys.argv[1:4]
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    with open(cases_path, encoding="utf-8") as handle:
        cases = json.load(handle)
    results = {}
    for case in cases:
        arguments = dict(
            tools=case.get("tools"),
            add_generation_prompt=case["add_generation_prompt"],
            **case.get("template_kwargs", {}),
        )
        text = tokenizer.apply_chat_template(case["messages"], tokenize=False, **arguments)
        ids = token_ids(tokenizer.apply_chat_template(case["messages"], tokenize=True, **arguments))
        results[case["name"]] = {"text": text, "ids": ids}
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump(results, handle, ensure_ascii=False)


if __name__ == "__main__":
    main()
