import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { requirePython } from "./support/qwen3.ts";

/**
 * python/train_grpo.py's reward transforms on a batch in GRPOTrainer's layout (consecutive groups of
 * num_generations completions of one prompt): the shuffled control keeps each group's rewards and moves
 * them only within the group; the constant control zeroes them; a batch that is not whole groups is refused.
 */
const ROOT = resolve(import.meta.dirname, "..");
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe("GRPO reward transforms (python/train_grpo.py)", () => {
  it("shuffle_within_group permutes within each group only; constant is zero; a split group is refused", () => {
    const python = requirePython();
    const result = spawnSync(python, [join(ROOT, "test/fixtures/pipeline/reward_transforms.py")], { encoding: "utf8", cwd: ROOT });
    assert.equal(result.status, 0, result.stderr);
    const output = JSON.parse(result.stdout) as Json;
    const rewards = output.rewards as Array<number | null>;
    const sorted = (values: Array<number | null>) => [...values].map(String).sort();
    const orders = new Set<string>();
    for (const shuffled of output.shuffles as Array<Array<number | null>>) {
      assert.deepEqual(sorted(shuffled.slice(0, 4)), sorted(rewards.slice(0, 4)), "group 1 keeps its rewards");
      assert.deepEqual(sorted(shuffled.slice(4)), sorted(rewards.slice(4)), "group 2 keeps its rewards");
      assert.equal(shuffled[3], null, "an unscored completion stays unscored");
      orders.add(JSON.stringify(shuffled));
    }
    assert.ok(orders.size > 5, `the rewards are actually permuted (${orders.size} distinct orders in 20 batches)`);
    assert.ok(!orders.has(JSON.stringify(rewards)) || orders.size > 1);
    assert.deepEqual(output.constant, [0, 0, 0, null, 0, 0, 0, 0]);
    const scored = rewards.filter((value): value is number => value !== null);
    assert.ok(
      Math.abs(output.logged["toolgym/env_reward"] - scored.reduce((sum, value) => sum + value, 0) / scored.length) < 1e-12,
      "the untransformed mean is logged",
    );
    assert.match(output.errors.mixed_group, /completions 0\.\.3 are not one prompt's group/);
    assert.match(output.errors.partial_group, /a batch of 6 completions is not whole groups of 4/);
    assert.equal(output.name, "reward_shuffle_within_group", "the name TRL logs the reward under");
    assert.equal(output.same_seed_same_order, true, "seeded: a rerun permutes the same way");
  });

  it("on a recorded batch with non-zero, varied rewards: each group keeps its multiset of rewards, and the order changes", () => {
    const python = requirePython();
    const fixture = join(ROOT, "test/fixtures/pipeline/recorded-batch.json");
    const batch = JSON.parse(readFileSync(fixture, "utf8")) as { group_size: number; rewards: number[] };
    const size = batch.group_size;
    const groups = (values: number[]) => Array.from({ length: values.length / size }, (_, index) => values.slice(index * size, (index + 1) * size));
    // The batch is one a trivial test would miss: rewards differ within groups and between them
    assert.ok(groups(batch.rewards).filter((group) => new Set(group).size > 1).length >= 2, "groups with reward variance");
    assert.ok(new Set(groups(batch.rewards).map((group) => group.reduce((sum, value) => sum + value, 0))).size > 1, "groups with different sums");
    const result = spawnSync(python, [join(ROOT, "test/fixtures/pipeline/reward_transforms.py"), fixture], { encoding: "utf8", cwd: ROOT });
    assert.equal(result.status, 0, result.stderr);
    const output = JSON.parse(result.stdout) as { shuffles: number[][]; logged: Record<string, number> };
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    let moved = 0;
    for (const shuffled of output.shuffles) {
      assert.deepEqual(groups(shuffled).map(sorted), groups(batch.rewards).map(sorted), "every group keeps its own rewards");
      if (JSON.stringify(shuffled) !== JSON.stringify(batch.rewards)) moved++;
    }
    assert.ok(moved >= 15, `the rewards are permuted (${moved} of 20 batches reordered)`);
    const mean = batch.rewards.reduce((sum, value) => sum + value, 0) / batch.rewards.length;
    assert.ok(Math.abs(output.logged["toolgym/env_reward"]! - mean) < 1e-12, "the untransformed batch mean is logged");
  });
});
