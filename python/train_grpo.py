"""GRPO on a toolgym environment with TRL's multi-turn `environment_factory` (the seed recipe as defaults).

    npx toolgym serve --port 8765 &
    npx toolgym dataset search_plan_act --split train --n 4096 --out prompts.parquet
    python python/train_grpo.py --dataset prompts.parquet --env search_plan_act --output-dir runs/grpo

Defaults: Qwen/Qwen3-4B, LoRA r=32 alpha=64 on q,k,v,o,gate,up,down, 250 steps, effective batch 32
(8 per device x 4 accumulation), vLLM colocate generation, thinking off. Every value is a flag. At the end the
adapter is saved under OUTPUT/adapter and the merged full-weight checkpoint (model.safetensors, config,
tokenizer files, chat_template.jinja) under OUTPUT; with `--curve-steps N`, every N steps a checkpoint of the
same layout goes to OUTPUT/curve/step-N for a learning curve. `--reward-transform` replaces the environment's
reward before the advantage with a control (see REWARD_TRANSFORMS). `--server-url` reaches a running server; without it the
script starts `npx toolgym serve` on a free loopback port and stops it at exit.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from toolgym_trl import WatchThresholds, environment_factory, log_reward_components, render_environment_schemas, reward_watch  # noqa: E402


def shuffle_within_group(rewards: list, group_size: int, rng: random.Random) -> list:
    """Each group's scored rewards permuted among its scored completions: the group keeps its reward distribution
    (so its mean, spread and zero-variance share), but which completion earned which reward is lost."""
    shuffled = list(rewards)
    for start in range(0, len(rewards), group_size):
        positions = [index for index in range(start, start + group_size) if rewards[index] is not None]
        values = [rewards[index] for index in positions]
        rng.shuffle(values)
        for index, value in zip(positions, values):
            shuffled[index] = value
    return shuffled


def constant_reward(rewards: list, group_size: int, rng: random.Random) -> list:
    """0 for every scored completion: every advantage is 0, so only what training does without a reward remains."""
    return [None if reward is None else 0.0 for reward in rewards]


REWARD_TRANSFORMS = {"none": None, "shuffle_within_group": shuffle_within_group, "constant": constant_reward}


def transformed_reward(name: str, environment_class, group_size: int, seed: int):
    """A TRL reward function: the environment's reward for each completion, transformed before the advantage.

    TRL lays a batch out as consecutive groups of `num_generations` completions of one prompt
    (`rewards.view(-1, num_generations)` in GRPOTrainer); the function checks that layout on the prompts it is
    given, so a group split across processes fails loudly instead of being shuffled with another. The
    untransformed batch mean is logged as `toolgym/env_reward`."""
    transform = REWARD_TRANSFORMS[name]
    rng = random.Random(seed)

    def reward(environments=None, prompts=None, log_metric=None, **kwargs) -> list:
        rewards = [environment_class.get_reward(environment) for environment in environments or []]
        if len(rewards) % group_size != 0:
            raise ValueError(f"--reward-transform {name}: a batch of {len(rewards)} completions is not whole groups of {group_size}")
        if prompts is not None:
            for start in range(0, len(prompts), group_size):
                if any(prompt != prompts[start] for prompt in prompts[start : start + group_size]):
                    raise ValueError(f"--reward-transform {name}: completions {start}..{start + group_size - 1} are not one prompt's group")
        scored = [value for value in rewards if value is not None]
        if log_metric is not None and scored:
            log_metric("toolgym/env_reward", sum(scored) / len(scored))
        return transform(rewards, group_size, rng)

    reward.__name__ = f"reward_{name}"
    return reward


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="Qwen/Qwen3-4B")
    parser.add_argument("--dataset", required=True, help="prompt dataset from `toolgym dataset` (.jsonl or .parquet)")
    parser.add_argument("--env", default=None, help="environment id (default: the dataset's env column)")
    parser.add_argument(
        "--max-turns",
        type=int,
        default=None,
        help="episode turn limit, each tool call a turn (default: the environment's own, as in `toolgym eval`); calls past it are not run",
    )
    parser.add_argument(
        "--server-url", default=None, help="running `toolgym serve` URL(s), comma-separated (sessions spread over them); default: start one"
    )
    parser.add_argument("--server-token", default=os.environ.get("TOOLGYM_TOKEN", os.environ.get("TOOLGYM_SERVER_TOKEN")))
    parser.add_argument("--toolgym-command", default="npx toolgym", help="how to run the toolgym CLI when starting a server")
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--max-steps", type=int, default=250)
    parser.add_argument("--per-device-batch-size", type=int, default=8)
    parser.add_argument("--gradient-accumulation-steps", type=int, default=4)
    parser.add_argument("--num-generations", type=int, default=8)
    parser.add_argument("--learning-rate", type=float, default=1e-5)
    parser.add_argument("--beta", type=float, default=0.0)
    parser.add_argument("--temperature", type=float, default=1.0)
    # Unset = TRL's defaults (top_p 1, top_k off, min_p off): sampling from the whole distribution. Qwen3's card
    # recommends top_p 0.8, top_k 20 (with temperature 0.7) without thinking; a small model's long tail breaks
    # its tool-call format when sampled whole.
    parser.add_argument("--top-p", type=float, default=None)
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--min-p", type=float, default=None)
    parser.add_argument("--max-completion-length", type=int, default=4096)
    parser.add_argument("--max-tool-calling-iterations", type=int, default=None)
    parser.add_argument("--lora-r", type=int, default=32, help="0 = full fine-tuning (no adapter)")
    parser.add_argument("--lora-alpha", type=int, default=64)
    parser.add_argument("--lora-dropout", type=float, default=0.0)
    parser.add_argument("--lora-target-modules", default="q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
    parser.add_argument("--use-vllm", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--vllm-mode", default="colocate", choices=["colocate", "server"])
    parser.add_argument("--vllm-gpu-memory-utilization", type=float, default=0.3)
    parser.add_argument("--vllm-server-host", default="127.0.0.1", help="with --vllm-mode server: where `trl vllm-serve` runs")
    parser.add_argument("--vllm-server-port", type=int, default=8000)
    parser.add_argument(
        "--tool-schemas",
        default="environment",
        choices=["environment", "trl"],
        help="how GRPO prompts render the tools: the environment's own schemas and order, as toolgym's evals and SFT rows do (default), or TRL's rebuild from the methods (alphabetical, no bounds)",
    )
    parser.add_argument("--enable-thinking", action=argparse.BooleanOptionalAction, default=False)
    parser.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=None, help="default: on when CUDA is available")
    parser.add_argument("--gradient-checkpointing", action=argparse.BooleanOptionalAction, default=None, help="default: on when CUDA is available")
    parser.add_argument("--use-cpu", action="store_true", help="train on CPU (tests, smoke runs)")
    parser.add_argument("--logging-steps", type=int, default=1)
    parser.add_argument("--save-steps", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--reward-transform",
        default="none",
        choices=list(REWARD_TRANSFORMS),
        help="what reaches the advantage: the environment's reward (none), each group's rewards permuted among its completions "
        "(shuffle_within_group: the same distribution without the task information, a control) or 0 for every completion (constant)",
    )
    parser.add_argument(
        "--curve-steps",
        type=int,
        default=0,
        help="every N steps, write a full checkpoint in the output layout under OUTPUT/curve/step-N for a learning curve (0: none)",
    )
    parser.add_argument(
        "--env-config",
        type=json.loads,
        default=None,
        help="JSON object of environment config keys set over every row's config (the pipeline's exploit arm: a reward variant)",
    )
    watch = WatchThresholds()
    parser.add_argument("--watch-window", type=int, default=watch.window, help="the reward-hacking watch compares the first and last N scoring batches")
    parser.add_argument("--watch-share-rise", type=float, default=watch.share_rise, help="a signature's share must rise at least this much to be flagged")
    parser.add_argument("--watch-reward-rise", type=float, default=watch.reward_rise, help="...while the mean reward rises at least this much")
    parser.add_argument(
        "--watch-outcome-ratio",
        type=float,
        default=watch.outcome_ratio,
        help="...and the mean outcome rises less than this times the reward's rise (docs/training.md, 'The watch')",
    )
    parser.add_argument("--report-to", default="none")
    parser.add_argument("--no-merge", action="store_true", help="keep only the adapter")
    return parser.parse_args(argv)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# Runs the server command in its own process group and stops the group once this script's process is gone,
# however it went (SIGKILL included, which no handler here sees): polled once a second.
SERVER_WATCHDOG = 'trap "kill -TERM 0" EXIT; "$@" & child=$!; while kill -0 "$TOOLGYM_PARENT" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1; done'


def stop_group(process: subprocess.Popen) -> None:
    """Stops the server's whole process group (npx, node and the server itself), then reaps the watchdog."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def exit_on_signal(number: int, _frame) -> None:
    raise SystemExit(128 + number)


def start_server(command: str, token: str | None) -> str:
    """Starts `toolgym serve` on a free loopback port; it stops with this script on every exit path: a normal
    exit or an exception (atexit), SIGTERM, SIGHUP or SIGINT (turned into an exit), and SIGKILL (the watchdog)."""
    port = free_port()
    arguments = command.split() + ["serve", "--host", "127.0.0.1", "--port", str(port)]
    # The token goes in the server's environment, not its command line, which `ps` shows to every user.
    environment = {**os.environ, "TOOLGYM_PARENT": str(os.getpid())}
    if token:
        environment["TOOLGYM_TOKEN"] = token
    process = subprocess.Popen(
        ["/bin/sh", "-c", SERVER_WATCHDOG, "toolgym-serve", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environment,
        start_new_session=True,
    )
    atexit.register(stop_group, process)
    for number in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(number) == signal.SIG_DFL:
            signal.signal(number, exit_on_signal)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"`{' '.join(arguments)}` exited with {process.returncode}: {process.stdout.read()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return url
        except OSError:
            time.sleep(0.25)
    raise SystemExit(f"toolgym serve did not start on {url} within 60 s")


def load_prompts(path: str):
    from datasets import load_dataset

    kind = "parquet" if path.endswith(".parquet") else "json"
    return load_dataset(kind, data_files=path, split="train")


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    dataset = load_prompts(args.dataset)
    env_id = args.env or dataset[0]["env"]
    url = args.server_url or start_server(args.toolgym_command, args.server_token)
    Environment = environment_factory(url, env=env_id, token=args.server_token, max_turns=args.max_turns, config=args.env_config)
    thresholds = WatchThresholds(args.watch_window, args.watch_share_rise, args.watch_reward_rise, args.watch_outcome_ratio)
    reward_funcs = [log_reward_components, reward_watch(Environment, thresholds)]
    if REWARD_TRANSFORMS[args.reward_transform] is not None:
        # TRL takes an environment's `get_reward` as a reward of weight 1; hidden here, it reaches TRL only transformed.
        owner = Environment
        Environment = type(owner.__name__, (owner,), {"get_reward": None})
        reward_funcs.append(transformed_reward(args.reward_transform, owner, args.num_generations, args.seed))
    cuda = torch.cuda.is_available() and not args.use_cpu
    bf16 = cuda if args.bf16 is None else args.bf16
    checkpointing = cuda if args.gradient_checkpointing is None else args.gradient_checkpointing

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    original_template = tokenizer.chat_template  # TRL may swap in its prefix-preserving training template
    if args.tool_schemas == "environment":
        render_environment_schemas(tokenizer)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16 if bf16 else torch.float32)
    config = GRPOConfig(
        output_dir=args.output_dir,
        max_steps=args.max_steps,
        per_device_train_batch_size=args.per_device_batch_size,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        num_generations=args.num_generations,
        learning_rate=args.learning_rate,
        beta=args.beta,
        temperature=args.temperature,
        **{name: value for name, value in (("top_p", args.top_p), ("top_k", args.top_k), ("min_p", args.min_p)) if value is not None},
        max_completion_length=args.max_completion_length,
        max_tool_calling_iterations=args.max_tool_calling_iterations,
        use_vllm=args.use_vllm,
        vllm_mode=args.vllm_mode,
        vllm_gpu_memory_utilization=args.vllm_gpu_memory_utilization,
        vllm_server_host=args.vllm_server_host,
        vllm_server_port=args.vllm_server_port,
        chat_template_kwargs={"enable_thinking": args.enable_thinking},
        bf16=bf16,
        gradient_checkpointing=checkpointing,
        use_cpu=args.use_cpu,
        logging_steps=args.logging_steps,
        save_steps=args.save_steps,
        seed=args.seed,
        report_to=args.report_to,
    )
    peft_config = (
        LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=args.lora_dropout, target_modules=args.lora_target_modules.split(","), task_type="CAUSAL_LM")
        if args.lora_r > 0
        else None
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward_funcs,
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        environment_factory=Environment,
        peft_config=peft_config,
        callbacks=[metrics_printer()] + ([curve_saver(args.curve_steps, tokenizer, original_template, Path(args.output_dir))] if args.curve_steps > 0 else []),
    )
    trainer.train()
    tokenizer.chat_template = original_template
    save_checkpoint(trainer, tokenizer, Path(args.output_dir), merge=not args.no_merge)
    Path(args.output_dir, "log_history.json").write_text(json.dumps(finite(trainer.state.log_history), indent=1))


def metrics_printer():
    """Prints each of TRL's logged metric dicts as one `TOOLGYM_METRICS {json}` line, so `toolgym pipeline` can follow the run live."""
    from transformers import TrainerCallback

    class MetricsPrinter(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs is not None and state.is_world_process_zero:
                print("TOOLGYM_METRICS " + json.dumps(finite({"step": state.global_step, **logs})), flush=True)

    return MetricsPrinter()


def curve_saver(every: int, tokenizer, template: str, output: Path):
    """Every `every` steps (the last step excepted: that is the final checkpoint), the model in the output layout under
    OUTPUT/curve/step-N, with the tokenizer's original chat template (the one evaluations serve)."""
    from transformers import TrainerCallback

    class CurveCheckpoints(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kwargs):
            step = state.global_step
            if step % every != 0 or step >= state.max_steps or not state.is_world_process_zero:
                return
            target = output / "curve" / f"step-{step}"
            partial = target.with_name(f".{target.name}.partial")
            shutil.rmtree(partial, ignore_errors=True)
            weights = model
            if hasattr(model, "merge_and_unload"):  # an adapter: merge a copy, training continues on the original
                import copy

                weights = copy.deepcopy(model).merge_and_unload()
            weights.save_pretrained(partial, safe_serialization=True)
            training_template = tokenizer.chat_template
            tokenizer.chat_template = template
            try:
                tokenizer.save_pretrained(partial)
            finally:
                tokenizer.chat_template = training_template
            shutil.rmtree(target, ignore_errors=True)
            partial.rename(target)
            print(f"TOOLGYM_CURVE_CHECKPOINT {json.dumps({'step': step, 'path': str(target)})}", flush=True)

    return CurveCheckpoints()


def finite(value):
    """NaN (a reward function that only logs) becomes null, so the log is strict JSON."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [finite(item) for item in value]
    return value


def save_checkpoint(trainer, tokenizer, output: Path, merge: bool = True) -> None:
    """The seed layout: OUTPUT/adapter (LoRA) and, merged, OUTPUT/{model.safetensors, config.json, tokenizer files, chat_template.jinja}."""
    output.mkdir(parents=True, exist_ok=True)
    model = trainer.model
    if not hasattr(model, "merge_and_unload"):  # full fine-tuning: the weights are the checkpoint
        model.save_pretrained(output, safe_serialization=True)
        tokenizer.save_pretrained(output)
        return
    model.save_pretrained(output / "adapter")
    tokenizer.save_pretrained(output / "adapter")
    if merge:
        merged = model.merge_and_unload()
        merged.save_pretrained(output, safe_serialization=True)
        tokenizer.save_pretrained(output)


if __name__ == "__main__":
    main()
