"""The Tau2 SFT recipe of the spec (docs: "Tau2 SFT data preparation"), in plain Python transformers.

Usage: python sft_reference.py MODEL_DIR INPUT.jsonl OUT.jsonl MAX_TOKENS [--enable-thinking true|false]
                               [--only-correct] [--with-text]
       python sft_reference.py --jobs JOBS.json   (several runs in one process)

Written from the spec's text alone, as a reference for toolgym's TypeScript pipeline and as the Python
baseline of bench/sft.ts. Per line `{messages, answer, metadata}`:

1. The agent's view of the history (spec §1.3 and P6): a user message that carries tool calls is not shown
   to the agent, and neither are the tool results it requested (a tool message's `requestor`, or when it
   has none, whoever made the most recent tool calls). History reasoning is not replayed (P5).
2. `answer.thinking` is renamed to `reasoning_content` (§1.1).
3. A message with tool calls and no content gets `content: ""`.
4. Nothing else is touched: tool calls, arguments and all texts go to the template as they are.
5. Two renders with transformers' `apply_chat_template` (§2.3): the context with the generation prompt, then
   context + target; tokenised with `add_special_tokens=False` (§5.2). The prompt ids must be a prefix of
   the full ids; labels are -100 over the prompt and the full ids after it. Otherwise the row is dropped.

Rows longer than MAX_TOKENS are reported as "needs-truncation" (this reference does not truncate).
Each output line is {"line", "input_ids", "labels"} (plus "prompt_text"/"full_text" with --with-text) or
{"line", "skip": reason}. A summary line {"input", "rows_in", "rows_out", "tokens", "seconds",
"peak_rss_mb"} per run is printed on stdout.
"""

import json
import resource
import sys
import time

from transformers import AutoTokenizer


class Skip(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def agent_view(messages):
    """The history as the tau2 agent sees it, reasoning removed and tool-call content defaulted to ""."""
    view = []
    last_caller = "assistant"
    for message in messages:
        if message.get("tool_calls"):
            last_caller = message["role"]
        if message["role"] == "user" and message.get("tool_calls"):
            continue
        if message["role"] == "tool" and message.get("requestor", last_caller) == "user":
            continue
        message = {key: value for key, value in message.items() if key not in ("thinking", "reasoning_content")}
        view.append(with_content(message))
    return view


def with_content(message):
    if message.get("tool_calls") and message.get("content") is None:
        return {**message, "content": ""}
    return message


def target_of(answer):
    target = {key: value for key, value in answer.items() if key != "thinking"}
    target.setdefault("role", "assistant")
    if "thinking" in answer:
        target["reasoning_content"] = answer["thinking"]
    return with_content(target)


def build_row(tokenizer, record, max_tokens, template_kwargs, with_text):
    context = agent_view(record["messages"])
    target = target_of(record["answer"])
    prompt = tokenizer.apply_chat_template(context, tokenize=False, add_generation_prompt=True, **template_kwargs)
    full = tokenizer.apply_chat_template(context + [target], tokenize=False, add_generation_prompt=False, **template_kwargs)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    full_ids = tokenizer(full, add_special_tokens=False)["input_ids"]
    if len(full_ids) > max_tokens:
        raise Skip("needs-truncation")
    if full_ids[: len(prompt_ids)] != prompt_ids:
        raise Skip("prefix-mismatch")
    row = {"input_ids": full_ids, "labels": [-100] * len(prompt_ids) + full_ids[len(prompt_ids) :]}
    if with_text:
        row["prompt_text"] = prompt
        row["full_text"] = full
    return row


def run_job(tokenizer, input_path, output_path, max_tokens, template_kwargs, only_correct, with_text):
    started = time.perf_counter()
    rows_in = rows_out = tokens = 0
    with open(input_path, encoding="utf-8") as source, open(output_path, "w", encoding="utf-8") as sink:
        for number, line in enumerate(source, start=1):
            if not line.strip():
                continue
            rows_in += 1
            try:
                record = json.loads(line)
                if only_correct and (record.get("metadata") or {}).get("correct") != 1:
                    raise Skip("not-correct")
                row = build_row(tokenizer, record, max_tokens, template_kwargs, with_text)
            except json.JSONDecodeError:
                result = {"line": number, "skip": "malformed-json"}
            except Skip as skip:
                result = {"line": number, "skip": skip.reason}
            except Exception as error:  # noqa: BLE001 - any other failure drops the row, named in the output
                result = {"line": number, "skip": "error", "detail": f"{type(error).__name__}: {error}"}
            else:
                result = {"line": number, **row}
                rows_out += 1
                tokens += len(row["input_ids"])
            sink.write(json.dumps(result, ensure_ascii=False) + "\n")
    seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"input": input_path, "rows_in": rows_in, "rows_out": rows_out, "tokens": tokens, "seconds": seconds, "peak_rss_mb": peak_kb / 1024}


def main() -> None:
    if sys.argv[1] == "--jobs":
        # [{model_dir, input, output, max_tokens, enable_thinking?, only_correct?, with_text?}]
        with open(sys.argv[2], encoding="utf-8") as handle:
            jobs = json.load(handle)
    else:
        model_dir, input_path, output_path, max_tokens = sys.argv[1:5]
        flags = sys.argv[5:]
        job = {"model_dir": model_dir, "input": input_path, "output": output_path, "max_tokens": int(max_tokens)}
        if "--enable-thinking" in flags:
            job["enable_thinking"] = flags[flags.index("--enable-thinking") + 1] == "true"
        job["only_correct"] = "--only-correct" in flags
        job["with_text"] = "--with-text" in flags
        jobs = [job]
    tokenizers = {}
    for job in jobs:
        if job["model_dir"] not in tokenizers:
            tokenizers[job["model_dir"]] = AutoTokenizer.from_pretrained(job["model_dir"], local_files_only=True)
        template_kwargs = {"enable_thinking": job["enable_thinking"]} if "enable_thinking" in job else {}
        summary = run_job(
            tokenizers[job["model_dir"]],
            job["input"],
            job["output"],
            int(job["max_tokens"]),
            template_kwargs,
            job.get("only_correct", False),
            job.get("with_text", False),
        )
        print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
