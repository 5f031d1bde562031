"""tau2 with the customer as a tool, through toolgym_trl and a real `toolgym serve` (test/trl-tau2-customer.test.ts).

    python python/tests/tau2_customer_trl.py adapter SERVER_URL ROWS.jsonl GOLD.json
    python python/tests/tau2_customer_trl.py grpo SERVER_URL ROWS.jsonl MODEL_DIR OUT_DIR

`adapter`: plays ROWS' first row as TRL would (reset(**row), the generated tool methods, get_reward): the gold
calls of GOLD.json, then a conversation that does nothing, then the row under tau2's leaderboard protocol and
without any config. `grpo`: a few real GRPO steps on CPU (TRL's own tool loop), recording every completion as
the reward functions receive it. Each prints one JSON line.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def adapter(url: str, rows_path: str, gold_path: str) -> dict:
    import toolgym_trl

    row = json.loads(Path(rows_path).read_text().splitlines()[0])
    gold = json.loads(Path(gold_path).read_text())
    Environment = toolgym_trl.environment_factory(url, env=row["env"])
    report: dict = {"methods": sorted(name for name in dir(Environment) if not name.startswith("_") and callable(getattr(Environment, name)))}

    env = Environment()
    report["reset_returned"] = env.reset(**row)
    report["prompt_roles"] = [message["role"] for message in env.prompt_messages]
    replies = [getattr(env, name)(**arguments) for name, arguments in gold]
    report["gold"] = {"replies": replies, "done": env.done, "reward": env.get_reward(), "termination": env.reward_breakdown["diagnostics"]["tau2_termination"]}

    idle = Environment()
    idle.reset(**row)
    # The customer says its problem is not solved, then gives up (tau2's user ends the call itself).
    replies = []
    while not idle.done and len(replies) < 5:
        replies.append(idle.send_message_to_user(content="Thank you for calling. Is there anything else I can help you with?"))
    report["do_nothing"] = {"replies": replies, "done": idle.done, "reward": idle.get_reward()}

    errors = {}
    for name, candidate in (
        ("leaderboard_protocol", {**row, "config": json.dumps({**json.loads(row["config"]), "customer": "message"}), "prompt_hash": None, "prompt": None}),
        ("no_config", {key: value for key, value in row.items() if key not in ("config", "prompt_hash", "prompt")}),
    ):
        try:
            Environment().reset(**candidate)
            errors[name] = None
        except Exception as error:  # noqa: BLE001 - the test reads the type and message
            errors[name] = {"type": type(error).__name__, "message": str(error)}
    report["refused"] = errors
    return report


def grpo(url: str, rows_path: str, model_dir: str, output: str) -> dict:
    from transformers import AutoTokenizer

    import toolgym_trl
    from grpo_trainer import cpu_grpo_trainer

    env_id = json.loads(Path(rows_path).read_text().splitlines()[0])["env"]
    seen: list = []

    def record(completions=None, environments=None, **kwargs):
        """Adds nothing to the reward: keeps each completion as TRL hands it over, with its environment's reward."""
        for completion, environment in zip(completions or [], environments or [], strict=False):
            seen.append({"messages": completion, "reward": environment.get_reward(), "calls": environment.calls})
        return [None] * len(completions or [])

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    toolgym_trl.render_environment_schemas(tokenizer)
    trainer = cpu_grpo_trainer(
        model_dir,
        rows_path,
        output,
        toolgym_trl.environment_factory(url, env=env_id),
        reward_funcs=[record],
        processing_class=tokenizer,
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=4,
        temperature=1.0,
        max_completion_length=160,
        max_tool_calling_iterations=4,
        learning_rate=1e-4,
    )
    trainer.train()
    return {"completions": seen, "log_history": trainer.state.log_history}


def main() -> None:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    mode, *args = sys.argv[1:]
    report = adapter(*args) if mode == "adapter" else grpo(*args)
    print(json.dumps(report, default=str))


if __name__ == "__main__":
    main()
