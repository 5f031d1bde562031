"""Pretokenized SFT rows (the `toolgym sft` row format) from oracle trajectories of `toolgym eval`.

    python python/tests/oracle_sft_rows.py RESULTS(.jsonl|DIR) SERVER_URL ENV TOKENIZER_DIR OUT.jsonl

One row per assistant turn: the conversation before it rendered with add_generation_prompt=True must be an
exact prefix of the conversation including it; the prefix is masked with -100. Rendered with TRL's
prefix-preserving Qwen3 training template, enable_thinking=False and the adapter's generated tool methods,
exactly as GRPOTrainer renders its prompts.
"""

import inspect
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    results, server_url, env_id, tokenizer_dir, out = sys.argv[1:6]
    import toolgym_trl
    import trl
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    template = (Path(trl.__file__).parent / "chat_templates" / "qwen3_training.jinja").read_text()
    instance = toolgym_trl.environment_factory(server_url, env=env_id)()
    tools = [member for name, member in inspect.getmembers(instance, inspect.ismethod) if name not in ("reset", "get_reward") and not name.startswith("_")]
    rows = 0
    with open(out, "w") as sink:
        path = Path(results)
        files = sorted(path.rglob("results.jsonl")) if path.is_dir() else [path]
        lines = [line for file in files for line in file.read_text().splitlines() if line.strip()]
        for line in lines:
            record = json.loads(line)
            # toolgym trajectories carry `messages`; verifiers-style results.jsonl rows carry prompt + completion.
            messages = record["messages"] if "messages" in record else record["prompt"] + record["completion"]
            for message in messages:
                for call in message.get("tool_calls") or []:
                    call["function"]["arguments"] = json.loads(call["function"]["arguments"])
            for position, message in enumerate(messages):
                if message["role"] != "assistant":
                    continue
                render = lambda history, generation: tokenizer.apply_chat_template(  # noqa: E731
                    history, tools=tools, chat_template=template, tokenize=True, add_generation_prompt=generation, enable_thinking=False, return_dict=False
                )
                prefix = render(messages[:position], True)
                full = render(messages[: position + 1], False)
                if full[: len(prefix)] != prefix:
                    raise SystemExit(f"render of turn {position} is not prefix-preserving")
                labels = [-100] * len(prefix) + full[len(prefix):]
                sink.write(json.dumps({"input_ids": full, "labels": labels, "assistant_masks": [int(label != -100) for label in labels]}) + "\n")
                rows += 1
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
