import { createHash } from "node:crypto";
import { createRandom, type AnyEnvironment, type JsonValue } from "../../core/index.ts";
import { getPolicy } from "../../agents/scripted/registry.ts";
import { runEpisode } from "../../rollout/run-episode.ts";

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

/**
 * A compact, byte-stable record of one task and its oracle episode: prompt, hidden solution, hashes
 * of the world and of the full trajectory, and the reward. Used by the golden-file and the
 * cross-process determinism tests.
 */
export async function snapshotTask(env: AnyEnvironment, address: { split: string; seed: number; index: number }): Promise<JsonValue> {
  const config = env.configSchema.parse({});
  const task = env.generate({ ...address, config });
  const agent = getPolicy(env.id, "oracle").create({ task, random: createRandom("policy", "oracle", address.split, address.seed, address.index) });
  const trajectory = await runEpisode({ env, ...address, config, agent, task });
  return {
    address,
    prompt: env.start(task).messages.map((message) => message.content ?? "") as string[],
    solution: env.solution(task),
    worldSha256: sha256(JSON.stringify((task as { records: unknown }).records)),
    taskSha256: sha256(JSON.stringify(task)),
    trajectorySha256: sha256(JSON.stringify(trajectory)),
    reward: JSON.parse(JSON.stringify(trajectory.reward)) as JsonValue,
  };
}

export const GOLDEN_ADDRESSES: Record<string, Array<{ split: string; seed: number; index: number }>> = {
  search_plan_act: [
    { split: "eval", seed: 1, index: 0 },
    { split: "eval", seed: 1, index: 2 },
    { split: "eval", seed: 7, index: 13 },
    { split: "train", seed: 0, index: 5 },
    { split: "train", seed: 42, index: 99 },
  ],
  search_plan_ood: [
    { split: "ood", seed: 1, index: 0 },
    { split: "ood", seed: 1, index: 2 },
    { split: "ood", seed: 7, index: 13 },
    { split: "ood", seed: 0, index: 5 },
    { split: "ood", seed: 42, index: 99 },
  ],
};
