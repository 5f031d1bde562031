"""The CPU GRPOTrainer every Python test driver builds (a tiny Qwen3, TRL's own tool loop, no vLLM).

    from grpo_trainer import cpu_grpo_trainer
    trainer = cpu_grpo_trainer(MODEL_DIR, ROWS.jsonl, OUT_DIR, environment_factory, max_steps=3)

One place for the settings the drivers share (CPU, fp32, no KL term, nothing saved or reported, thinking off,
seeded), so that a driver states only what its test is about; keyword arguments override any GRPOConfig field.
"""

import os

# The settings the tests' assertions rely on; anything else is TRL's default.
DEFAULTS = dict(
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
    save_strategy="no",
    report_to="none",
    chat_template_kwargs={"enable_thinking": False},
    seed=0,
)


def cpu_grpo_trainer(model_dir, dataset_path, output_dir, environment_factory, reward_funcs=None, processing_class=None, **overrides):
    """A GRPOTrainer over the JSONL rows at `dataset_path`, its environments made by `environment_factory`."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    torch.manual_seed(0)
    config = GRPOConfig(output_dir=output_dir, **{**DEFAULTS, **overrides})
    return GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32),
        args=config,
        train_dataset=load_dataset("json", data_files=dataset_path, split="train"),
        processing_class=processing_class if processing_class is not None else AutoTokenizer.from_pretrained(model_dir),
        environment_factory=environment_factory,
        **({"reward_funcs": reward_funcs} if reward_funcs is not None else {}),
    )
