"""SFT on the pretokenized rows `toolgym sft` writes ({input_ids, labels, assistant_masks, metadata}).

    python python/train_sft.py --dataset sft.parquet --output-dir runs/sft [--model Qwen/Qwen3-4B]

The rows already carry the exact chat-template rendering and the loss mask (labels -100 outside the
target assistant turn), so TRL's SFTTrainer trains on them as they are: no re-tokenization, no packing.
Defaults: full fine-tuning of Qwen/Qwen3-4B, learning rate 1e-5 with cosine decay and 3% warm-up, 2 epochs,
effective batch 32 (`--trl-defaults`: TRL SFTConfig's own for those not given), max length 32768, bf16 and
gradient checkpointing on CUDA. `--lora-r N` trains a LoRA
adapter instead (saved under OUTPUT/adapter and merged into OUTPUT). The checkpoint is written in the seed
layout: model.safetensors, config.json, tokenizer files, chat_template.jinja.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="Qwen/Qwen3-4B")
    parser.add_argument("--dataset", required=True, help="pretokenized rows from `toolgym sft` (.jsonl or .parquet)")
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--learning-rate", type=float, default=None, help="default 1e-5")
    parser.add_argument("--lr-scheduler-type", default=None, help="default cosine")
    parser.add_argument("--warmup-ratio", type=float, default=None, help="default 0.03")
    parser.add_argument("--epochs", type=float, default=None, help="default 2")
    parser.add_argument("--max-steps", type=int, default=-1)
    parser.add_argument("--per-device-batch-size", type=int, default=None, help="default 1")
    parser.add_argument("--gradient-accumulation-steps", type=int, default=None, help="default 32")
    parser.add_argument(
        "--trl-defaults",
        action="store_true",
        help="the schedule options not given keep TRL SFTConfig's own defaults instead of this script's (a recipe that states none, as the Tau2 card)",
    )
    parser.add_argument("--max-length", type=int, default=32768)
    parser.add_argument("--lora-r", type=int, default=0, help="0 = full fine-tuning")
    parser.add_argument("--lora-alpha", type=int, default=None, help="default: 2 x r")
    parser.add_argument("--lora-target-modules", default="q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
    parser.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=None, help="default: on when CUDA is available")
    parser.add_argument("--gradient-checkpointing", action=argparse.BooleanOptionalAction, default=None, help="default: on when CUDA is available")
    parser.add_argument("--use-cpu", action="store_true")
    parser.add_argument("--logging-steps", type=int, default=10)
    parser.add_argument("--save-strategy", default="no")
    parser.add_argument("--save-steps", type=int, default=500, help="with --save-strategy steps: checkpoint every N steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report-to", default="none")
    args = parser.parse_args(argv)
    if not args.trl_defaults:
        for name, value in SCRIPT_DEFAULTS.items():
            if getattr(args, name) is None:
                setattr(args, name, value)
    return args


# This script's schedule (the seed's); with --trl-defaults, the options not given are left to SFTConfig.
SCRIPT_DEFAULTS = {
    "learning_rate": 1e-5,
    "lr_scheduler_type": "cosine",
    "warmup_ratio": 0.03,
    "epochs": 2.0,
    "per_device_batch_size": 1,
    "gradient_accumulation_steps": 32,
}


def read_json_rows(path: str):
    """The token columns of a JSON Lines file, read with a fixed schema; other fields (metadata) are skipped.

    Why not `load_dataset("json")`: it infers each field's type from the first block of rows, so metadata
    whose numbers are all integers early and fractional later (a reward of 1, then 0.92) fails the whole
    load with a cast error, although training never reads the metadata."""
    import pyarrow as pa
    import pyarrow.json as arrow_json
    from datasets import Dataset

    tokens = pa.list_(pa.int64())
    schema = pa.schema([("input_ids", tokens), ("labels", tokens), ("assistant_masks", tokens)])
    options = arrow_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        table = arrow_json.read_json(path, parse_options=options)
    except (pa.ArrowInvalid, OSError) as error:
        raise SystemExit(f"{path}: not JSON Lines rows of token lists ({error})")
    # A field no row has comes back as a column of nulls.
    absent = [name for name in table.column_names if table.column(name).null_count == table.num_rows]
    return Dataset(table.drop_columns(absent))


def load_rows(path: str):
    from datasets import load_dataset

    dataset = load_dataset("parquet", data_files=path, split="train") if path.endswith(".parquet") else read_json_rows(path)
    if "input_ids" not in dataset.column_names:
        raise SystemExit(f"{path}: no input_ids column; produce pretokenized rows with `toolgym sft`")
    if "labels" not in dataset.column_names:
        if "assistant_masks" not in dataset.column_names:
            raise SystemExit(f"{path}: rows need labels or assistant_masks")
        dataset = dataset.map(lambda row: {"labels": [token if mask else -100 for token, mask in zip(row["input_ids"], row["assistant_masks"])]})
    return dataset.select_columns(["input_ids", "labels"])


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(argv)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    cuda = torch.cuda.is_available() and not args.use_cpu
    bf16 = cuda if args.bf16 is None else args.bf16
    checkpointing = cuda if args.gradient_checkpointing is None else args.gradient_checkpointing
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16 if bf16 else torch.float32)
    peft_config = None
    if args.lora_r > 0:
        from peft import LoraConfig

        peft_config = LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha or 2 * args.lora_r, target_modules=args.lora_target_modules.split(","), task_type="CAUSAL_LM")
    schedule = {
        "learning_rate": args.learning_rate,
        "lr_scheduler_type": args.lr_scheduler_type,
        "warmup_steps": args.warmup_ratio,  # transformers 5: a float below 1 is a fraction of the steps
        "num_train_epochs": args.epochs,
        "per_device_train_batch_size": args.per_device_batch_size,
        "gradient_accumulation_steps": args.gradient_accumulation_steps,
    }
    config = SFTConfig(
        output_dir=args.output_dir,
        **{name: value for name, value in schedule.items() if value is not None},
        max_steps=args.max_steps,
        max_length=args.max_length,
        packing=False,
        bf16=bf16,
        gradient_checkpointing=checkpointing,
        use_cpu=args.use_cpu,
        logging_steps=args.logging_steps,
        save_strategy=args.save_strategy,
        save_steps=args.save_steps,
        seed=args.seed,
        report_to=args.report_to,
    )
    trainer = SFTTrainer(model=model, args=config, train_dataset=load_rows(args.dataset), processing_class=tokenizer, peft_config=peft_config)
    trainer.train()
    output = Path(args.output_dir)
    model = trainer.model
    if peft_config is not None:
        model.save_pretrained(output / "adapter")
        model = model.merge_and_unload()
    model.save_pretrained(output, safe_serialization=True)
    tokenizer.save_pretrained(output)
    (output / "log_history.json").write_text(json.dumps(trainer.state.log_history, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
