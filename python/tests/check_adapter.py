"""Checks toolgym_trl against a running `toolgym serve` (called from test/trl-adapter.test.ts).

    python python/tests/check_adapter.py BASE_URL TOKEN TOKENIZER_DIR

Prints one JSON object: for every environment, the tool schemas as TRL renders them into the prompt
(transformers' get_json_schema on the generated methods, the function GRPOTrainer's apply_chat_template
uses) next to the server's, the prompt a Qwen3 tokenizer renders from those methods with and without
`render_environment_schemas`, plus the result of a short episode driven through the adapter.
"""

import inspect
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    base_url, token = sys.argv[1], sys.argv[2]
    before = set(sys.modules)
    import toolgym_trl

    imported = sorted({name.split(".")[0] for name in set(sys.modules) - before} - set(sys.stdlib_module_names) - {"toolgym_trl"})
    from transformers import AutoTokenizer
    from transformers.utils import get_json_schema

    plain = AutoTokenizer.from_pretrained(sys.argv[3])
    wrapped = AutoTokenizer.from_pretrained(sys.argv[3])
    toolgym_trl.render_environment_schemas(wrapped)
    conversation = [{"role": "user", "content": "hello"}]

    def render(tokenizer, tools):
        return tokenizer.apply_chat_template(conversation, tools=tools, tokenize=False, add_generation_prompt=True, enable_thinking=False)

    report = {"non_stdlib_imports": imported, "environments": {}}
    for entry in toolgym_trl.list_environments(base_url, token):
        Environment = toolgym_trl.environment_factory(base_url, env=entry["id"], token=token)
        instance = Environment()
        methods = [member for name, member in inspect.getmembers(instance, inspect.ismethod) if name not in ("reset", "get_reward") and not name.startswith("_")]
        report["environments"][entry["id"]] = {
            "class": Environment.__name__,
            "server": entry["tools"],
            "trl": [get_json_schema(method) for method in methods],
            "environment_schemas": toolgym_trl.environment_schemas(methods),
            "method_order": [method.__name__ for method in methods],
            # what GRPOTrainer renders: the methods (getmembers order) through the tokenizer, wrapped or not
            "rendered_wrapped_equals_server": render(wrapped, methods) == render(plain, entry["tools"]),
            "rendered_plain_equals_server": render(plain, methods) == render(plain, entry["tools"]),
        }
    # A short mock episode through the adapter, as TRL drives it: reset(**row), tool methods, get_reward.
    Mock = toolgym_trl.environment_factory(base_url, env="mock", token=token)
    env = Mock()
    task = {"env": "mock", "split": "train", "seed": 4, "index": 2, "config": '{"keys": 6}'}
    without_prompt = env.reset(**task)
    own_prompt = [{"role": message["role"], "content": message["content"]} for message in env.prompt_messages]
    env.reset(**{**task, "index": 3})
    other_prompt = [{"role": message["role"], "content": message["content"]} for message in env.prompt_messages]
    # what reset returns (TRL appends it to the prompt's last message), or the error it raises, per row kind
    rows = {
        "empty_prompt": {**task, "prompt": [{"role": "user", "content": ""}]},
        "other_task_prompt": {**task, "prompt": other_prompt},
        "old_env_version": {**task, "prompt": own_prompt, "env_version": "0.0.0-old"},
        "wrong_prompt_hash": {**task, "prompt": [{"role": "user", "content": ""}], "prompt_hash": "0" * 64},
        "matching_hash": {**task, "prompt": own_prompt, "prompt_hash": toolgym_trl.prompt_hash([(m["role"], m["content"]) for m in own_prompt])},
    }
    resets = {}
    for name, candidate in rows.items():
        try:
            resets[name] = {"returned": env.reset(**candidate)}
        except toolgym_trl.StaleDatasetError as error:
            resets[name] = {"error": str(error)}
    row = {**task, "prompt": own_prompt}
    observation = env.reset(**row)
    key = env.prompt_messages[-1]["content"].split("'")[1]
    looked = json.loads(env.lookup(key=key))
    finished = json.loads(env.finish(answer=looked["value"]))
    reward = env.get_reward()
    breakdown = env.reward_breakdown
    errors = {}
    try:
        toolgym_trl.environment_factory("http://127.0.0.1:9", env="mock")
    except toolgym_trl.ToolgymConnectionError as error:
        errors["unreachable"] = str(error)
    try:
        toolgym_trl.environment_factory(base_url, env="mock", token="wrong")
    except toolgym_trl.ToolgymServerError as error:
        errors["bad_token"] = error.code
    try:
        env.reset(env="mock", split="nope")
    except toolgym_trl.ToolgymServerError as error:
        errors["bad_split"] = error.code
    # A turn limit from the factory: the right answer on the second call comes too late and earns nothing.
    Limited = toolgym_trl.environment_factory(base_url, env="mock", token=token, max_turns=1)
    limited = Limited()
    limited.reset(**task)
    limited.lookup(key=key)
    late = json.loads(limited.finish(answer=looked["value"]))
    turn_limit = {"late": late, "done": limited.done, "reward": limited.get_reward(), "ended_by": limited.reward_breakdown["ended_by"]}
    report["episode"] = {
        "turn_limit": turn_limit,
        "observation": observation,
        "without_prompt": without_prompt,
        "resets": resets,
        "looked": looked,
        "finished": finished,
        "reward": reward,
        "breakdown": breakdown,
        "errors": errors,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
