"""GRPO across several nodes with the engines TRL already uses: `accelerate launch` for the trainer processes,
`trl vllm-serve` for generation (TRL's vLLM server mode), and one `toolgym serve` per training node. Run it
on every node with that node's `--node-rank`; `--dry-run` prints every node's commands instead.

    python python/launch_multinode.py --nodes 10.0.0.1,10.0.0.2,10.0.0.3 --node-rank 0 \\
        --dataset prompts.parquet --env search_plan_act --output-dir runs/grpo -- --max-steps 500

Layout: the last node (or `--vllm-node`) serves the policy with `trl vllm-serve` on all its GPUs; the other
nodes train, one process per GPU, in one accelerate world (`--num_machines`, `--machine_rank`,
`--main_process_ip` = the first training node; the same checkout path on every node). Each training node runs `toolgym serve --workers W`; every
trainer process gets the list of all those servers, spreads its sessions over them and, when one stops
answering, starts new sessions on the others (toolgym_trl.environment_factory). Nothing here coordinates the
nodes beyond starting the standard commands: accelerate and TRL do the distributed work.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", required=True, help="every node's address (hostname or IP), comma-separated, the same list on every node")
    parser.add_argument("--node-rank", type=int, default=None, help="this node's position in --nodes (needed unless --dry-run)")
    parser.add_argument("--vllm-node", type=int, default=None, help="position of the node that runs `trl vllm-serve` (default: the last)")
    parser.add_argument("--gpus-per-node", type=int, default=8)
    parser.add_argument("--model", default="Qwen/Qwen3-4B")
    parser.add_argument("--dataset", required=True, help="prompt dataset from `toolgym dataset`, at the same path on every training node")
    parser.add_argument("--env", required=True, help="environment id")
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--vllm-port", type=int, default=8000)
    parser.add_argument("--vllm-tensor-parallel-size", type=int, default=1)
    parser.add_argument("--vllm-data-parallel-size", type=int, default=None, help="default: the vLLM node's GPUs / tensor parallel size")
    parser.add_argument("--main-process-port", type=int, default=29500, help="accelerate's rendezvous port on the first training node")
    parser.add_argument("--toolgym-port", type=int, default=8765)
    parser.add_argument("--toolgym-workers", type=int, default=4, help="`toolgym serve --workers` on each training node")
    parser.add_argument("--toolgym-command", default="npx toolgym", help="how to run the toolgym CLI on the nodes")
    parser.add_argument("--dry-run", action="store_true", help="print every node's commands and exit")
    parser.add_argument("train_arguments", nargs=argparse.REMAINDER, help="after `--`: more train_grpo.py options")
    args = parser.parse_args(argv)
    args.nodes = [node.strip() for node in args.nodes.split(",") if node.strip()]
    if len(args.nodes) < 2:
        parser.error("--nodes needs at least two nodes (one for vLLM, one or more to train); on one node use train_grpo.py directly")
    args.vllm_node = len(args.nodes) - 1 if args.vllm_node is None else args.vllm_node
    if not 0 <= args.vllm_node < len(args.nodes):
        parser.error(f"--vllm-node must be 0..{len(args.nodes) - 1}")
    if args.node_rank is None and not args.dry_run:
        parser.error("give this node's --node-rank (its position in --nodes), or --dry-run to print every node's commands")
    if args.node_rank is not None and not 0 <= args.node_rank < len(args.nodes):
        parser.error(f"--node-rank must be 0..{len(args.nodes) - 1}")
    if args.gpus_per_node % args.vllm_tensor_parallel_size != 0:
        parser.error("--gpus-per-node must be a multiple of --vllm-tensor-parallel-size")
    if args.train_arguments[:1] == ["--"]:
        args.train_arguments = args.train_arguments[1:]
    return args


def node_commands(args: argparse.Namespace, rank: int) -> list[tuple[str, list[str]]]:
    """The commands node `rank` runs, in order, each as (role, argv); every one but the last runs in the background."""
    vllm_host = args.nodes[args.vllm_node]
    training = [node for position, node in enumerate(args.nodes) if position != args.vllm_node]
    if rank == args.vllm_node:
        data_parallel = args.vllm_data_parallel_size or args.gpus_per_node // args.vllm_tensor_parallel_size
        serve = ["trl", "vllm-serve", "--model", args.model, "--host", "0.0.0.0", "--port", str(args.vllm_port)]
        serve += ["--tensor-parallel-size", str(args.vllm_tensor_parallel_size), "--data-parallel-size", str(data_parallel)]
        return [("vllm", serve)]
    machine_rank = training.index(args.nodes[rank])
    toolgym = args.toolgym_command.split() + ["serve", "--host", "0.0.0.0", "--port", str(args.toolgym_port), "--workers", str(args.toolgym_workers)]
    urls = ",".join(f"http://{node}:{args.toolgym_port}" for node in training)
    launch = ["accelerate", "launch", "--multi_gpu", "--num_machines", str(len(training)), "--machine_rank", str(machine_rank)]
    launch += ["--num_processes", str(len(training) * args.gpus_per_node), "--main_process_ip", training[0]]
    launch += ["--main_process_port", str(args.main_process_port), "--rdzv_backend", "static", "--same_network"]
    launch += [os.path.relpath(HERE / "train_grpo.py"), "--model", args.model, "--dataset", args.dataset, "--env", args.env]
    launch += ["--output-dir", args.output_dir, "--server-url", urls, "--use-vllm", "--vllm-mode", "server"]
    launch += ["--vllm-server-host", vllm_host, "--vllm-server-port", str(args.vllm_port), *args.train_arguments]
    return [("toolgym", toolgym), ("train", launch)]


def print_plan(args: argparse.Namespace) -> None:
    for rank, node in enumerate(args.nodes):
        commands = node_commands(args, rank)
        role = "vLLM server" if rank == args.vllm_node else "training"
        print(f"# node {rank} ({node}): {role}")
        for position, (_, command) in enumerate(commands):
            background = " &" if position < len(commands) - 1 else ""
            print(shlex.join(command) + background)
        print()


def wait_for_health(url: str, seconds: float = 120.0) -> None:
    """Waits for this node's `toolgym serve` (the trainer needs at least one server answering at start)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"toolgym serve did not answer at {url}/health within {seconds:.0f} s")


def run_node(args: argparse.Namespace) -> int:
    commands = node_commands(args, args.node_rank)
    background = [subprocess.Popen(command) for _, command in commands[:-1]]
    try:
        if background:
            wait_for_health(f"http://127.0.0.1:{args.toolgym_port}")
        return subprocess.call(commands[-1][1])
    finally:
        for process in background:
            process.terminate()


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    if args.dry_run:
        print_plan(args)
        return 0
    return run_node(args)


if __name__ == "__main__":
    sys.exit(main())
