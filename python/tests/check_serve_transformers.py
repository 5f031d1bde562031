"""Checks python/serve_transformers.py against transformers' own completion parsing.

Usage: check_serve_transformers.py TOKENIZER_DIR   (Qwen3's tokenizer; the model is described as Qwen3's
config describes it, `model_type` "qwen3", which is all the parser reads of the model)
Prints one JSON line: what the strict parser and the launcher's parser made of a well-formed and of a malformed
tool call.
"""

import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from transformers import AutoTokenizer
from transformers.cli.serving import chat_completion

tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
model = SimpleNamespace(config=SimpleNamespace(model_type="qwen3"))
strict = chat_completion.parse_assistant_message

spec = importlib.util.spec_from_file_location("serve_transformers", Path(__file__).parents[1] / "serve_transformers.py")
launcher = importlib.util.module_from_spec(spec)
spec.loader.exec_module(launcher)  # importing it (not running it) patches transformers' chat completion handler

prompt_ids = tokenizer.apply_chat_template([{"role": "user", "content": "Set it."}], add_generation_prompt=True, tokenize=True)
if isinstance(prompt_ids, dict) or hasattr(prompt_ids, "keys"):
    prompt_ids = prompt_ids["input_ids"]


def completion(text):
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    cleaned = tokenizer.decode(ids, skip_special_tokens=True)
    return ids, cleaned


def outcome(parse, text):
    ids, cleaned = completion(text)
    try:
        content, _, calls = parse(tokenizer, model, ids, input_ids=prompt_ids, cleaned_content=cleaned)
    except Exception as error:  # the strict parser's failure is what is being recorded
        return {"raised": type(error).__name__}
    return {"content": content, "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in (calls or [])]}


well_formed = '<tool_call>\n{"name": "update_record", "arguments": {"id": "WRD-1917", "value": "closed"}}\n</tool_call><|im_end|>'
malformed = '<tool_call>\n{"name": "update_record", "arguments": {"id": "WRD-1917", "value": closed"}}\n</tool_call><|im_end|>'
print(
    json.dumps(
        {
            "patched": chat_completion.parse_assistant_message is launcher.parse_or_text,
            "strict": {"well_formed": outcome(strict, well_formed), "malformed": outcome(strict, malformed)},
            "launcher": {"well_formed": outcome(launcher.parse_or_text, well_formed), "malformed": outcome(launcher.parse_or_text, malformed)},
        }
    )
)
