import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { requirePython } from "./support/qwen3.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const root = resolve(import.meta.dirname, "..");
const plan = ["--nodes", "10.0.0.1,10.0.0.2,10.0.0.3", "--gpus-per-node", "4", "--dataset", "prompts.parquet", "--env", "mock", "--output-dir", "runs/grpo"];

async function python(script: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const result = await promisify(execFile)(requirePython(), [resolve(root, script), ...args], { cwd: root, encoding: "utf8", timeout: 120_000 });
    return { code: 0, stdout: result.stdout, stderr: result.stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("multi-node recipe (python/launch_multinode.py)", () => {
  it("--dry-run prints each node's commands: toolgym serve + accelerate launch on training nodes, trl vllm-serve on the last", async () => {
    const result = await python("python/launch_multinode.py", [...plan, "--dry-run", "--", "--max-steps", "500"]);
    assert.equal(result.code, 0, result.stderr);
    const train = (rank: number) =>
      `accelerate launch --multi_gpu --num_machines 2 --machine_rank ${rank} --num_processes 8 --main_process_ip 10.0.0.1 --main_process_port 29500 ` +
      "--rdzv_backend static --same_network python/train_grpo.py --model Qwen/Qwen3-4B --dataset prompts.parquet --env mock --output-dir runs/grpo " +
      "--server-url http://10.0.0.1:8765,http://10.0.0.2:8765 --use-vllm --vllm-mode server --vllm-server-host 10.0.0.3 --vllm-server-port 8000 --max-steps 500";
    const serve = "npx toolgym serve --host 0.0.0.0 --port 8765 --workers 4 &";
    assert.equal(
      result.stdout,
      [
        "# node 0 (10.0.0.1): training",
        serve,
        train(0),
        "",
        "# node 1 (10.0.0.2): training",
        serve,
        train(1),
        "",
        "# node 2 (10.0.0.3): vLLM server",
        "trl vllm-serve --model Qwen/Qwen3-4B --host 0.0.0.0 --port 8000 --tensor-parallel-size 1 --data-parallel-size 4",
        "",
        "",
      ].join("\n"),
    );
  });

  it("every command parses with the real parsers: accelerate launch, train_grpo.py and trl vllm-serve", async () => {
    const result = await python("python/tests/check_multinode_plan.py", [...plan, "--vllm-node", "0", "--vllm-tensor-parallel-size", "2", "--dry-run"]);
    assert.equal(result.code, 0, result.stderr);
    const nodes = JSON.parse(result.stdout.trim().split("\n").at(-1) as string) as Json[];
    assert.deepEqual(nodes[0], { vllm: { model: "Qwen/Qwen3-4B", host: "0.0.0.0", port: 8000, tp: 2, dp: 2 } });
    for (const [position, node] of nodes.slice(1).entries()) {
      assert.deepEqual(node.accelerate, {
        multi_gpu: true,
        num_machines: 2,
        machine_rank: position,
        num_processes: 8,
        main_process_ip: "10.0.0.2",
        main_process_port: 29500,
        rdzv_backend: "static",
        same_network: true,
      });
      assert.equal(node.script, "python/train_grpo.py");
      assert.equal(node.train.server_url, "http://10.0.0.2:8765,http://10.0.0.3:8765");
      assert.equal(node.train.vllm_mode, "server");
      assert.equal(node.train.vllm_server_host, "10.0.0.1");
      assert.equal(node.train.use_vllm, true);
      assert.deepEqual(node.toolgym, ["npx", "toolgym", "serve", "--host", "0.0.0.0", "--port", "8765", "--workers", "4"]);
    }
  });

  it("refuses a plan it cannot run, saying what to pass", async () => {
    const withoutRank = await python("python/launch_multinode.py", plan);
    assert.equal(withoutRank.code, 2);
    assert.match(withoutRank.stderr, /give this node's --node-rank \(its position in --nodes\), or --dry-run/);
    const oneNode = await python("python/launch_multinode.py", [...plan.slice(2), "--nodes", "10.0.0.1", "--dry-run"]);
    assert.equal(oneNode.code, 2);
    assert.match(oneNode.stderr, /--nodes needs at least two nodes/);
  });
});
