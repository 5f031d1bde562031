"""Real TRL GRPO (CPU, tiny Qwen3) on dataset rows whose prompt cannot carry their task (test/trl-task-prompt.test.ts).

    python python/tests/grpo_task_prompts.py MODEL_DIR SERVER_URL EMPTY.jsonl STALE.jsonl OUT_DIR

EMPTY.jsonl holds rows with an empty prompt: one GRPO step runs with `log_completions=True`, and the prompts
TRL logged (OUT_DIR/empty/completions/*.parquet) are reported. STALE.jsonl holds rows whose prompt belongs to
another task: training must stop with toolgym_trl's StaleDatasetError, whose type and message are reported.
Prints one JSON line {"logged_prompts": [...], "stale_error": {"type", "message"} | null}.
"""

import glob
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def trainer_for(model_dir, environment, dataset_path, output_dir):
    import torch
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    torch.manual_seed(0)
    config = GRPOConfig(
        output_dir=output_dir,
        max_steps=1,
        per_device_train_batch_size=2,
        gradient_accumulation_steps=1,
        num_generations=2,
        max_completion_length=8,
        max_tool_calling_iterations=1,
        learning_rate=1e-5,
        beta=0.0,
        use_cpu=True,
        use_vllm=False,
        logging_steps=1,
        log_completions=True,
        save_strategy="no",
        report_to="none",
        chat_template_kwargs={"enable_thinking": False},
        seed=0,
    )
    return GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32),
        args=config,
        train_dataset=load_dataset("json", data_files=dataset_path, split="train"),
        processing_class=AutoTokenizer.from_pretrained(model_dir),
        environment_factory=environment,
    )


def main() -> None:
    model_dir, url, empty_path, stale_path, output = sys.argv[1:6]
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import pandas
    import toolgym_trl

    environment = toolgym_trl.environment_factory(url, env="mock")
    trainer_for(model_dir, environment, empty_path, os.path.join(output, "empty")).train()
    logged = []
    for path in sorted(glob.glob(os.path.join(output, "empty", "completions", "*.parquet"))):
        logged.extend(pandas.read_parquet(path)["prompt"].tolist())

    stale_error = None
    try:
        trainer_for(model_dir, environment, stale_path, os.path.join(output, "stale")).train()
    except toolgym_trl.StaleDatasetError as error:
        stale_error = {"type": type(error).__name__, "message": str(error)}
    print(json.dumps({"logged_prompts": logged, "stale_error": stale_error}))


if __name__ == "__main__":
    main()
