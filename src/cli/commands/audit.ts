import type { Command } from "commander";
import { UsageError, parseConfig } from "../../core/index.ts";
import { getAuditSpec } from "../../audit/registry.ts";
import { formatAuditTable, runAudit } from "../../audit/run-audit.ts";
import { getEnvironment } from "../../envs/registry.ts";
import { writeJson, type CliIo, type CommandContext } from "../io.ts";
import { parseInteger, parseJsonText, parseText, resolveSplit, splitList } from "../options.ts";

interface AuditOptions {
  n?: number;
  seed: number;
  split?: string;
  config: string;
  policies?: string;
  json?: boolean;
}

const DEFAULT_AUDIT_N = 500;
/** The audit holds every task of every policy in memory at once. */
const MAX_AUDIT_N = 100_000;

/**
 * Tasks per policy, consistent with `eval`: a fixed dataset smaller than the default is audited whole
 * (with a note), and an explicit `--n` beyond it is refused, since repeated tasks would shrink the CIs.
 */
function auditSize(
  env: { id: string; taskCount?: (address: { split: string; config: never }) => number },
  split: string,
  config: unknown,
  n: number | undefined,
  io: CliIo,
): number {
  const available = env.taskCount?.({ split, config: config as never });
  if (available === undefined) return n ?? DEFAULT_AUDIT_N;
  if (n === undefined) {
    if (available < DEFAULT_AUDIT_N) io.stderr.write(`toolgym: note: ${env.id} has ${available} tasks (split ${split}); auditing all ${available}\n`);
    return Math.min(DEFAULT_AUDIT_N, available);
  }
  if (n > available)
    throw new UsageError({
      code: "N_BEYOND_DATASET",
      message: `--n ${n} is more than the ${available} distinct tasks of ${env.id} (split ${split}) with this config; pass --n ${available} or less`,
    });
  return n;
}

export function registerAudit(program: Command, { io, setExitCode }: CommandContext): void {
  program
    .command("audit")
    .description("Run genuine policies and reward-hacking pilots over the same tasks; exit 1 if the reward can be gamed.")
    .argument("<env>", "environment id (toolgym list envs)")
    .option(
      "--n <n>",
      `tasks per policy (default ${DEFAULT_AUDIT_N}, or every task of a smaller fixed dataset; at most ${MAX_AUDIT_N.toLocaleString("en-US")})`,
      parseInteger("--n", { min: 1, max: MAX_AUDIT_N }),
    )
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
      const split = resolveSplit(env, options.split);
      const n = auditSize(env, split, config, options.n, io);
      const result = await runAudit({ env, spec, n, seed: options.seed, config, split, policies });
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
