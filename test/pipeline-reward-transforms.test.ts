import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
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
});
