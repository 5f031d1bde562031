import type { Command } from "commander";
import { parseConfig } from "../../core/index.ts";
import { getAuditSpec } from "../../audit/registry.ts";
import { formatAuditTable, runAudit } from "../../audit/run-audit.ts";
import { getEnvironment } from "../../envs/registry.ts";
import { parseInteger, writeJson } from "../options.ts";

export function registerAudit(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("audit")
    .description("Run genuine policies and reward-hacking pilots over the same tasks; exit 1 if the reward can be gamed.")
    .argument("<env>", "environment id")
    .option("--n <n>", "tasks per policy", parseInteger("--n"), 500)
    .option("--seed <seed>", "seed of the task set", parseInteger("--seed"), 0)
    .option("--split <split>", "task split (default: the environment's evaluation split)")
    .option("--config <json>", "environment config as JSON", "{}")
    .option("--policies <ids>", "comma-separated subset of policies")
    .option("--json", "print the result as JSON")
    .action(async (envId: string, options: { n: number; seed: number; split?: string; config: string; policies?: string; json?: boolean }) => {
      const env = getEnvironment(envId);
      const config = parseConfig(env.id, env.configSchema, options.config);
      const spec = getAuditSpec(env.id);
      const result = await runAudit({ env, spec, n: options.n, seed: options.seed, config, split: options.split, policies: options.policies?.split(",") });
      if (options.json)
        writeJson({
          env: result.env,
          n: result.n,
          seed: result.seed,
          split: result.split,
          policies: result.policies,
          verdict: result.verdict,
          failures: result.failures,
        });
      else process.stdout.write(`${formatAuditTable(result, spec.components)}\n`);
      setExitCode(result.verdict === "pass" ? 0 : 1);
    });
}
