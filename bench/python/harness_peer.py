"""The Python peer of toolgym's eval harness, for bench/harness.ts.

Built the way `verifiers` runs an evaluation: an `openai.AsyncOpenAI` client, one asyncio task per
episode, an `asyncio.Semaphore` bounding the episodes in flight, the tools run in Python, and one JSON
results line appended per finished episode. It plays the `mock` environment's tasks exported by the
benchmark (messages, tool schemas, the key/value table), so both harnesses run the same episodes
against the same scripted server.

  python bench/python/harness_peer.py --base-url URL --tasks FILE --out FILE --concurrency C [--warmup K]

Prints one JSON object: model turns, CPU seconds of this process (time.process_time) and wall seconds
of the measured phase, and resident-memory samples every 1,000 episodes.
"""

import argparse
import asyncio
import gc
import json
import resource
import time

import httpx
from openai import AsyncOpenAI


def resident_mb() -> float:
    """Current resident set size in MB (Linux /proc), falling back to the peak where /proc is missing."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
        return pages * resource.getpagesize() / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_tool(task: dict, state: dict, name: str, arguments: str) -> str:
    """The mock environment's two tools: lookup(key) and finish(answer)."""
    try:
        args = json.loads(arguments)
    except json.JSONDecodeError:
        return json.dumps({"error": {"code": "invalid_arguments", "message": "arguments are not JSON"}})
    if name == "lookup":
        value = task["table"].get(args.get("key"))
        if value is None:
            return json.dumps({"error": {"code": "unknown_key", "message": f"no key '{args.get('key')}'"}})
        state["seen"].add(value)
        return json.dumps({"key": args["key"], "value": value})
    if name == "finish":
        state["answer"] = str(args.get("answer", "")).strip()
        state["done"] = True
        return json.dumps({"ok": True})
    return json.dumps({"error": {"code": "unknown_tool", "message": f"no tool {name}"}})


async def episode(client: AsyncOpenAI, model: str, task: dict, index: int, semaphore: asyncio.Semaphore, out, counters: dict) -> None:
    async with semaphore:
        messages = [dict(message) for message in task["messages"]]
        state = {"seen": set(), "answer": None, "done": False}
        turns = 0
        while not state["done"] and turns < task["max_turns"]:
            response = await client.chat.completions.create(model=model, messages=messages, tools=task["tools"])
            turns += 1
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                content = run_tool(task, state, call.function.name, call.function.arguments)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        outcome = 1.0 if state["answer"] == task["answer"] and state["answer"] in state["seen"] else 0.0
        reward = 0.8 * outcome + 0.2 * (1.0 if state["done"] else 0.0)
        out.write(json.dumps({"example_id": index, "reward": reward, "turns": turns, "messages": messages}) + "\n")
        counters["turns"] += turns
        counters["reward"] += reward
        counters["episodes"] += 1
        if counters["episodes"] % 1000 == 0:
            gc.collect()
            counters["memory"].append([counters["episodes"], resident_mb()])


async def play(client: AsyncOpenAI, model: str, tasks: list, concurrency: int, out) -> dict:
    semaphore = asyncio.Semaphore(concurrency)
    counters = {"turns": 0, "episodes": 0, "reward": 0.0, "memory": []}
    await asyncio.gather(*(episode(client, model, task, index, semaphore, out, counters) for index, task in enumerate(tasks)))
    return counters


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--tasks", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--model", default="scripted")
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--warmup", type=int, default=500)
    options = parser.parse_args()
    with open(options.tasks, encoding="utf8") as file:
        tasks = [json.loads(line) for line in file]
    # The openai client's default pool (1,000 connections) would do; said explicitly so every episode in flight has one.
    limits = httpx.Limits(max_connections=options.concurrency, max_keepalive_connections=options.concurrency)
    client = AsyncOpenAI(base_url=options.base_url, api_key="EMPTY", http_client=httpx.AsyncClient(limits=limits, timeout=600))
    with open(options.out, "a", encoding="utf8") as out:
        await play(client, options.model, tasks[: options.warmup], options.concurrency, out)
        cpu = time.process_time()
        wall = time.perf_counter()
        counters = await play(client, options.model, tasks, options.concurrency, out)
        cpu = time.process_time() - cpu
        wall = time.perf_counter() - wall
    await client.close()
    print(json.dumps({"episodes": counters["episodes"], "turns": counters["turns"], "reward": counters["reward"], "cpu_seconds": cpu, "wall_seconds": wall, "memory": counters["memory"]}))


if __name__ == "__main__":
    asyncio.run(main())
