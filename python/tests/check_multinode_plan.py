"""Parses every command of a multi-node plan with the real parsers (called from test/trl-multinode.test.ts).

    python python/tests/check_multinode_plan.py LAUNCH_MULTINODE_ARGS...

For each node: the `accelerate launch` options as accelerate's own parser reads them, the train_grpo.py
options as the script reads them, and the `trl vllm-serve` options as TRL's parser reads them. Prints JSON.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import launch_multinode  # noqa: E402
import train_grpo  # noqa: E402


def main() -> None:
    from accelerate.commands.launch import launch_command_parser
    from trl.scripts.vllm_serve import make_parser

    args = launch_multinode.parse_arguments(sys.argv[1:])
    nodes = []
    for rank in range(len(args.nodes)):
        parsed = {}
        for role, command in launch_multinode.node_commands(args, rank):
            if role == "vllm":
                (serve,) = make_parser().parse_args_and_config(command[2:])
                parsed["vllm"] = {"model": serve.model, "host": serve.host, "port": serve.port, "tp": serve.tensor_parallel_size, "dp": serve.data_parallel_size}
            elif role == "train":
                launch = launch_command_parser().parse_args(command[2:])
                parsed["accelerate"] = {
                    key: getattr(launch, key)
                    for key in ("multi_gpu", "num_machines", "machine_rank", "num_processes", "main_process_ip", "main_process_port", "rdzv_backend", "same_network")
                }
                parsed["script"] = launch.training_script
                train = train_grpo.parse_arguments(launch.training_script_args)
                parsed["train"] = {
                    key: getattr(train, key)
                    for key in ("model", "dataset", "env", "output_dir", "server_url", "use_vllm", "vllm_mode", "vllm_server_host", "vllm_server_port", "max_steps")
                }
            else:
                parsed["toolgym"] = command
        nodes.append(parsed)
    print(json.dumps(nodes))


if __name__ == "__main__":
    main()
