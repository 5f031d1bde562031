"""A straightforward Python implementation of the Tau2 SFT double-render recipe.

Usage: python sft_reference.py MODEL_DIR INPUT.jsonl OUT.jsonl MAX_TOKENS [--enable-thinking true|false]
                               [--only-correct]
       python sft_reference.py --jobs JOBS.json   (several runs in one process)

Used twice: by test/sft-labels.test.ts, which compares the TypeScript rows with these on every row that
needs no truncation, and by bench/sft.ts as the Python baseline (one process: transformers
`apply_chat_template` twice per row + the fast Rust tokenizer). The normalisation follows
shared/specs/sft-tau2.md (§1.1, §2.3, §3.3) and is written independently of the TypeScript code. Rows
longer than MAX_TOKENS are reported as "needs-truncation" (this reference does not truncate).

Each output line is {"line", "input_ids", "labels"} or {"line", "skip": reason}. A summary line
{"input", "rows_in", "rows_out", "tokens", "seconds", "peak_rss_mb"} per run is printed on stdout.
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


def normalise_call(raw):
    source = raw["function"] if isinstance(raw.get("function"), dict) else raw
    name = source.get("name")
    if not isinstance(name, str):
        raise Skip("invalid-record")
    arguments = source.get("arguments")
    if isinstance(arguments, str):
        text = arguments
    elif arguments is None:
        text = "{}"
    else:
        text = json.dumps(arguments, ensure_ascii=False)
    return {"name": name, "arguments": text}


def calls_of(message):
    calls = message.get("tool_calls")
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise Skip("invalid-record")
    return [normalise_call(call) for call in calls]


def assistant(message, keep_reasoning):
    content = message.get("content")
    result = {"role": "assistant", "content": content.lstrip() if isinstance(content, str) else ""}
    if keep_reasoning:
        reasoning = message.get("reasoning_content")
        if not isinstance(reasoning, str):
            reasoning = message.get("thinking")
        if isinstance(reasoning, str):
            result["reasoning_content"] = reasoning.strip()
    calls = calls_of(message)
    if calls:
        result["tool_calls"] = calls
    return result


def is_real_query(message):
    content = message.get("content")
    return (
        message["role"] == "user"
        and isinstance(content, str)
        and not (content.startswith("<tool_response>") and content.endswith("</tool_response>"))
    )


def normalise(record, only_correct):
    metadata = record.get("metadata") or {}
    if only_correct and metadata.get("correct") != 1:
        raise Skip("not-correct")
    context = []
    pending = "assistant"
    for message in record["messages"]:
        role = message["role"]
        if role == "assistant":
            normalised = assistant(message, keep_reasoning=False)
            if "tool_calls" in normalised:
                pending = "assistant"
            context.append(normalised)
        elif role == "user":
            if calls_of(message):
                pending = "user"
                content = message.get("content")
                if isinstance(content, str) and content:
                    context.append({"role": "user", "content": content})
                continue
            context.append({"role": "user", "content": message.get("content")})
        elif role == "tool":
            requestor = message.get("requestor")
            if not isinstance(requestor, str):
                requestor = pending
            if requestor == "user":
                continue
            content = message.get("content")
            if content is None:
                content = ""
            elif not isinstance(content, str):
                content = json.dumps(content, ensure_ascii=False)
            context.append({"role": "tool", "content": content})
        elif role == "system":
            context.append({"role": "system", "content": message.get("content")})
        else:
            raise Skip("invalid-record")
    target = assistant(record["answer"], keep_reasoning=True)
    if target["content"] == "" and "tool_calls" not in target:
        raise Skip("empty-target")
    if not context:
        raise Skip("empty-context")
    if context[-1]["role"] == "assistant":
        raise Skip("context-ends-with-assistant")
    if not any(is_real_query(message) for message in context):
        raise Skip("no-user-query")
    return context, target


def run_job(tokenizer, input_path, output_path, max_tokens, template_kwargs, only_correct):
    started = time.perf_counter()
    rows_in = rows_out = tokens = 0
    with open(input_path, encoding="utf-8") as source, open(output_path, "w", encoding="utf-8") as sink:
        for number, line in enumerate(source, start=1):
            if not line.strip():
                continue
            rows_in += 1
            try:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    raise Skip("malformed-json")
                context, target = normalise(record, only_correct)
                prompt = tokenizer.apply_chat_template(context, tokenize=False, add_generation_prompt=True, **template_kwargs)
                full = tokenizer.apply_chat_template(context + [target], tokenize=False, **template_kwargs)
                prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
                full_ids = tokenizer(full, add_special_tokens=False)["input_ids"]
                if len(full_ids) > max_tokens:
                    raise Skip("needs-truncation")
                if full_ids[: len(prompt_ids)] != prompt_ids:
                    raise Skip("prefix-mismatch")
                labels = [-100] * len(prompt_ids) + full_ids[len(prompt_ids):]
                sink.write(json.dumps({"line": number, "input_ids": full_ids, "labels": labels}) + "\n")
                rows_out += 1
                tokens += len(full_ids)
            except (KeyError, TypeError, AttributeError):
                sink.write(json.dumps({"line": number, "skip": "invalid-record"}) + "\n")
            except Skip as skip:
                sink.write(json.dumps({"line": number, "skip": skip.reason}) + "\n")
    seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"input": input_path, "rows_in": rows_in, "rows_out": rows_out, "tokens": tokens, "seconds": seconds, "peak_rss_mb": peak_kb / 1024}


def main() -> None:
    if sys.argv[1] == "--jobs":
        # several runs in one process: [{model_dir, input, output, max_tokens, enable_thinking?, only_correct?}]
        with open(sys.argv[2], encoding="utf-8") as handle:
            jobs = json.load(handle)
    else:
        model_dir, input_path, output_path, max_tokens = sys.argv[1:5]
        flags = sys.argv[5:]
        job = {"model_dir": model_dir, "input": input_path, "output": output_path, "max_tokens": int(max_tokens)}
        if "--enable-thinking" in flags:
            job["enable_thinking"] = flags[flags.index("--enable-thinking") + 1] == "true"
        job["only_correct"] = "--only-correct" in flags
        jobs = [job]
    tokenizers = {}
    for job in jobs:
        if job["model_dir"] not in tokenizers:
            tokenizers[job["model_dir"]] = AutoTokenizer.from_pretrained(job["model_dir"], local_files_only=True)
        template_kwargs = {"enable_thinking": job["enable_thinking"]} if "enable_thinking" in job else {}
        summary = run_job(tokenizers[job["model_dir"]], job["input"], job["output"], int(job["max_tokens"]), template_kwargs, job.get("only_correct", False))
        print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
