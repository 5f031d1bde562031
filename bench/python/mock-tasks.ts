import { writeFileSync } from "node:fs";
import { parseConfig } from "../../src/core/index.ts";
import type { MockTask } from "../../src/envs/mock/index.ts";
import { getEnvironment } from "../../src/envs/registry.ts";

/**
 * Writes the first `n` tasks of the `mock` environment (split eval, seed 0, default config) as JSON lines
 * for the Python peer harness: the opening messages and tool schemas toolgym sends, plus the key/value
 * table and answer its Python tools need, so both harnesses play the same episodes.
 */
export function writeMockTasks(n: number, path: string): void {
  const env = getEnvironment("mock");
  const config = parseConfig("mock", env.configSchema, "{}");
  const lines: string[] = [];
  for (let index = 0; index < n; index++) {
    const task = env.generate({ split: "eval", seed: 0, index, config }) as MockTask;
    const episode = env.start(task);
    lines.push(JSON.stringify({ messages: episode.messages, tools: episode.tools, table: task.table, answer: task.answer, max_turns: env.maxTurns(task) }));
  }
  writeFileSync(path, `${lines.join("\n")}\n`);
}
