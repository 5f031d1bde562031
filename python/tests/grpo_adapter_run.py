"""Real TRL GRPO (CPU, tiny Qwen3) through toolgym_trl against a `toolgym serve` that restarts mid-run, on rows
whose prompt cannot carry their task (test/trl-grpo-adapter.test.ts).

    python python/tests/grpo_adapter_run.py MODEL_DIR EMPTY.jsonl STALE.jsonl PORT OUT_DIR TOOLGYM_BIN

Starts `node TOOLGYM_BIN serve --port PORT`, then:
1. directly: an environment resets, the server is killed (SIGKILL) and started again on the same port, and its
   next tool call and `get_reward()` are recorded (the exception's type and message, the reward);
2. GRPO on EMPTY.jsonl (rows whose prompt was emptied), 3 steps of 2 completions with `log_completions=True`:
   right after the 3rd `reset` (the first episode of step 2) the server is killed and started again, so that
   episode's session is gone; training must go on, and every prompt TRL logged must carry its task;
3. GRPO on STALE.jsonl (rows whose prompt belongs to another task): training must stop with StaleDatasetError.
One training serves both stories because each row's prompt and the server's sessions are independent.
Prints one JSON line {"direct", "steps", "rewards", "lost_logs", "restarts", "logged_prompts", "stale_error"}.
"""

import glob
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from grpo_trainer import cpu_grpo_trainer  # noqa: E402


class Server:
    """`toolgym serve` as a child process on a fixed port, killed and started again on demand."""

    def __init__(self, toolgym_bin: str, port: int):
        self.arguments = ["node", toolgym_bin, "serve", "--port", str(port)]
        self.url = f"http://127.0.0.1:{port}"
        self.process = None
        self.restarts = 0

    def start(self) -> None:
        self.process = subprocess.Popen(self.arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Generous: node starts slowly on a loaded CI machine; each probe is a fresh connection.
        deadline = time.time() + 180
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"toolgym serve exited with {self.process.returncode} while starting")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=10) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise SystemExit("toolgym serve did not start within 180 s")

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


def direct_restart(server: Server, Environment, rows: list) -> dict:
    """One episode whose server restarts under it: what its next call and get_reward() do."""
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
    return direct


def main() -> None:
    model_dir, empty_path, stale_path, port, output, toolgym_bin = sys.argv[1:7]
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import pandas
    import toolgym_trl

    logs = CountingHandler()
    logging.getLogger("toolgym_trl").addHandler(logs)
    server = Server(toolgym_bin, int(port))
    server.start()
    try:
        rows = [json.loads(line) for line in Path(empty_path).read_text().splitlines() if line.strip()]
        Environment = toolgym_trl.environment_factory(server.url, env="mock")
        direct = direct_restart(server, Environment, rows)

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

        trainer = cpu_grpo_trainer(model_dir, empty_path, os.path.join(output, "empty"), Restarting, max_steps=3, log_completions=True)
        trainer.train()
        logged = []
        for path in sorted(glob.glob(os.path.join(output, "empty", "completions", "*.parquet"))):
            logged.extend(pandas.read_parquet(path)["prompt"].tolist())

        stale_error = None
        try:
            cpu_grpo_trainer(model_dir, stale_path, os.path.join(output, "stale"), Environment).train()
        except toolgym_trl.StaleDatasetError as error:
            stale_error = {"type": type(error).__name__, "message": str(error)}
        print(
            json.dumps(
                {
                    "direct": direct,
                    "steps": trainer.state.global_step,
                    "rewards": rewards,
                    "lost_logs": logs.messages,
                    "restarts": server.restarts,
                    "logged_prompts": logged,
                    "stale_error": stale_error,
                }
            )
        )
    finally:
        server.stop()


if __name__ == "__main__":
    main()
