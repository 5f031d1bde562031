import { createHash } from "node:crypto";
import { createRandom, type AnyEnvironment, type JsonValue } from "../core/index.ts";
import { getPolicy } from "../envs/registry.ts";
import { runEpisode } from "../rollout/run-episode.ts";

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
