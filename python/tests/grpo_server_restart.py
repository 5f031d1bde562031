"""Real TRL GRPO (CPU, tiny Qwen3) against a `toolgym serve` that restarts mid-run (test/trl-adapter-restart.test.ts).

    python python/tests/grpo_server_restart.py MODEL_DIR ROWS.jsonl PORT OUT_DIR TOOLGYM_BIN

Starts `node TOOLGYM_BIN serve --port PORT`, then:
1. directly: an environment resets, the server is killed (SIGKILL) and started again on the same port, and its
   next tool call and `get_reward()` are recorded (the exception's type and message, the reward);
2. GRPO, 3 steps of 2 completions: right after the 3rd `reset` (the first episode of step 2) the server is killed
   and started again, so that episode's session is gone; training must go on.
Prints one JSON line {"direct": {...}, "steps", "rewards", "lost_logs", "restarts"}.
"""

import json
import logging
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class Server:
    """`toolgym serve` as a child process on a fixed port, killed and started again on demand."""

    def __init__(self, toolgym_bin: str, port: int):
        self.arguments = ["node", toolgym_bin, "serve", "--port", str(port)]
        self.url = f"http://127.0.0.1:{port}"
        self.process = None
        self.restarts = 0

    def start(self) -> None:
        self.process = subprocess.Popen(self.arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise SystemExit("toolgym serve did not start within 60 s")

    def restart(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.restarts += 1
        self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


class CountingHandler(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def main() -> None:
    model_dir, rows_path, port, output, toolgym_bin = sys.argv[1:6]
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import toolgym_trl

    logs = CountingHandler()
    logging.getLogger("toolgym_trl").addHandler(logs)
    server = Server(toolgym_bin, int(port))
    server.start()
    try:
        rows = [json.loads(line) for line in Path(rows_path).read_text().splitlines() if line.strip()]
        Environment = toolgym_trl.environment_factory(server.url, env="mock")

        # 1. One episode whose server restarts under it.
        episode = Environment()
        episode.reset(**{**rows[0], "prompt": None})
        server.restart()
        direct = {}
        try:
            episode.lookup(key="anything")
        except Exception as error:  # noqa: BLE001 - the type is what is checked
            direct["error_type"] = type(error).__name__
            direct["error_code"] = getattr(error, "code", None)
            direct["message"] = str(error)
        direct["reward"] = episode.get_reward()
        direct["reward_again"] = episode.get_reward()
        episode.reset(**{**rows[1], "prompt": None})
        direct["after_reset_reward"] = episode.get_reward()

        # 2. GRPO whose server restarts during step 2.
        rewards = []
        resets = {"count": 0}

        class Restarting(Environment):
            def reset(self, **row):
                answer = super().reset(**row)
                resets["count"] += 1
                if resets["count"] == 3:
                    server.restart()
                return answer

            def get_reward(self):
                reward = super().get_reward()
                rewards.append(reward)
                return reward

        import torch
        from datasets import load_dataset
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from trl import GRPOConfig, GRPOTrainer

        torch.manual_seed(0)
        config = GRPOConfig(
            output_dir=output,
            max_steps=3,
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
        trainer = GRPOTrainer(
            model=AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32),
            args=config,
            train_dataset=load_dataset("json", data_files=rows_path, split="train"),
            processing_class=AutoTokenizer.from_pretrained(model_dir),
            environment_factory=Restarting,
        )
        trainer.train()
        print(
            json.dumps(
                {
                    "direct": direct,
                    "steps": trainer.state.global_step,
                    "rewards": rewards,
                    "lost_logs": logs.messages,
                    "restarts": server.restarts,
                }
            )
        )
    finally:
        server.stop()


if __name__ == "__main__":
    main()
