import type { Command } from "commander";
import { parseConfig } from "../../core/index.ts";
import { getAuditSpec } from "../../audit/registry.ts";
import { formatAuditTable, runAudit } from "../../audit/run-audit.ts";
import { getEnvironment } from "../../envs/registry.ts";
import { writeJson, type CommandContext } from "../io.ts";
import { parseInteger, parseJsonText, parseText, resolveSplit, splitList } from "../options.ts";

interface AuditOptions {
  n: number;
  seed: number;
  split?: string;
  config: string;
  policies?: string;
  json?: boolean;
}

export function registerAudit(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("audit")
    .description("Run genuine policies and reward-hacking pilots over the same tasks; exit 1 if the reward can be gamed.")
    .argument("<env>", "environment id (toolgym list envs)")
    .option("--n <n>", "tasks per policy", parseInteger("--n", { min: 1 }), 500)
    .option("--seed <seed>", "seed of the task set", parseInteger("--seed", { min: 0 }), 0)
    .option("--split <split>", "task split (default: the environment's evaluation split)", parseText("--split"))
    .option("--config <json>", "environment config as JSON", parseJsonText("--config"), "{}")
    .option("--policies <ids>", "comma-separated subset of policies (toolgym list pilots ENV)", parseText("--policies"))
    .option("--json", "print the result as JSON")
    .action(async (envId: string, options: AuditOptions) => {
      const env = getEnvironment(envId);
      const config = parseConfig(env.id, env.configSchema, options.config);
      const spec = getAuditSpec(env.id);
      const policies = options.policies === undefined ? undefined : splitList("--policies", options.policies);
      const result = await runAudit({ env, spec, n: options.n, seed: options.seed, config, split: resolveSplit(env, options.split), policies });
      if (options.json)
        writeJson(io, {
          env: result.env,
          n: result.n,
          seed: result.seed,
          split: result.split,
          policies: result.policies,
          verdict: result.verdict,
          failures: result.failures,
        });
      else io.stdout.write(`${formatAuditTable(result, spec.components)}\n`);
      setExitCode(result.verdict === "pass" ? 0 : 1);
    });
}
