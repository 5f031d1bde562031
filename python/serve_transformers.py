"""`transformers serve`, except that a tool call whose body is not JSON comes back as the model's text.

transformers serve parses a Qwen3 completion's `<tool_call>` blocks as JSON and answers HTTP 500 when one does
not parse. vLLM's hermes parser and TRL's tool loop (`trl.chat_template_utils.parse_response`) both return such
a completion as plain text instead, so the model's malformed call is scored as the model's failure. Served
through this launcher, transformers behaves the same way: toolgym's client then finds the `<tool_call>` text in
the content, fails to parse it and records a format error, so evaluations through transformers and through
vLLM count a malformed call alike instead of dropping the episode as errored.

Usage: serve_transformers.py [MODEL] [transformers serve options...]  (the arguments of `transformers serve`; without
MODEL it loads each request's `model` by name, which is how `toolgym pipeline` serves every model of a stage)
"""

import sys

from transformers.cli.serving import chat_completion
from transformers.cli.transformers import main

strict_parse = getattr(chat_completion, "parse_assistant_message", None)
if strict_parse is None:
    sys.exit(
        "serve_transformers: this transformers version has no chat_completion.parse_assistant_message; "
        "pin the transformers version in python/pyproject.toml or update this launcher"
    )


def parse_or_text(processor, model, generated_ids, input_ids, cleaned_content=""):
    """The strict parse; when it fails, the decoded text with no tool calls (what vLLM and TRL return)."""
    try:
        return strict_parse(processor, model, generated_ids, input_ids=input_ids, cleaned_content=cleaned_content)
    except (ValueError, TypeError, KeyError):
        return cleaned_content, None, None


chat_completion.parse_assistant_message = parse_or_text

if __name__ == "__main__":
    sys.argv = ["transformers", "serve", *sys.argv[1:]]
    sys.exit(main())
