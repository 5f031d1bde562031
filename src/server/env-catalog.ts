import { parseConfig, type AnyEnvironment, type ToolSpec } from "../core/index.ts";

export interface EnvironmentEntry {
  id: string;
  version: string;
  description: string;
  protocol: string;
  splits: readonly string[];
  default_split: string;
  /** The tool schemas of a task under the training config (OpenAI function format), the ones the adapter binds. */
  tools: ToolSpec[];
  /** The reward-hacking watch's outcome component and signatures (environments that declare one), so a trainer logs every signature's share. */
  watch?: { outcome: string; signatures: Array<{ name: string; description: string }> };
}

/**
 * Describes each environment once (tool schemas come from starting one default task, since the
 * contract exposes tools per episode) and caches the result.
 */
export function createEnvironmentCatalog(environments: Record<string, AnyEnvironment>): {
  list(): EnvironmentEntry[];
  get(id: string): EnvironmentEntry | undefined;
} {
  const cache = new Map<string, EnvironmentEntry>();
  const describe = (env: AnyEnvironment): EnvironmentEntry => {
    let entry = cache.get(env.id);
    if (!entry) {
      // The trainer's tools: a training config where the environment has one (tau2: the customer as a tool).
      const config = parseConfig(env.id, env.configSchema, env.trainingConfig ?? {});
      const episode = env.start(env.generate({ split: env.defaultSplit, seed: 0, index: 0, config }));
      entry = {
        id: env.id,
        version: env.version,
        description: env.description,
        protocol: env.protocol,
        splits: env.splits,
        default_split: env.defaultSplit,
        tools: episode.tools,
      };
      if (env.watch) entry.watch = { outcome: env.watch.outcome, signatures: env.watch.signatures.map(({ name, description }) => ({ name, description })) };
      cache.set(env.id, entry);
    }
    return entry;
  };
  return {
    list: () => Object.values(environments).map(describe),
    get: (id) => (Object.hasOwn(environments, id) ? describe(environments[id] as AnyEnvironment) : undefined),
  };
}
