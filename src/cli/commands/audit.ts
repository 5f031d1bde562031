import type { Command } from "commander";
import { UsageError, parseConfig } from "../../core/index.ts";
import { getAuditSpec } from "../../audit/registry.ts";
import { auditPolicies, formatAuditTable, runAudit } from "../../audit/run-audit.ts";
import { getEnvironment } from "../../envs/registry.ts";
import { writeJson, type CliIo, type CommandContext } from "../io.ts";
import { parseInteger, parseConfigOption, parseText, resolveSplit, splitList } from "../options.ts";

interface AuditOptions {
  n?: number;
  numTrials?: number;
  seed: number;
  split?: string;
  config: string;
  policies?: string;
  json?: boolean;
}

const DEFAULT_AUDIT_N = 500;
/** The audit holds every task of every policy in memory at once. */
const MAX_AUDIT_N = 100_000;
/** Default plays per task of a small fixed dataset: enough that the policies' order is not noise. */
const MAX_DEFAULT_TRIALS = 20;

/**
 * Tasks per policy and plays per task, consistent with `eval`: a fixed dataset smaller than the default is
 * audited whole, each task played several times with its trials' seeds (with a note); an explicit `--n`
 * beyond it is refused, since repeated tasks counted as new ones would shrink the CIs.
 */
function auditSize(
  env: { id: string; taskCount?: (address: { split: string; config: never }) => number },
  split: string,
  config: unknown,
  n: number | undefined,
  numTrials: number | undefined,
  io: CliIo,
): { n: number; trials: number } {
  const available = env.taskCount?.({ split, config: config as never });
  if (available === undefined) return { n: n ?? DEFAULT_AUDIT_N, trials: numTrials ?? 1 };
  if (n === undefined) {
    const tasks = Math.min(DEFAULT_AUDIT_N, available);
    const trials = numTrials ?? Math.max(1, Math.min(MAX_DEFAULT_TRIALS, Math.floor(DEFAULT_AUDIT_N / tasks)));
    if (available < DEFAULT_AUDIT_N)
      io.stderr.write(`toolgym: note: ${env.id} has ${available} tasks (split ${split}); auditing all ${available}, ${trials} trial(s) each (--num-trials)\n`);
    return { n: tasks, trials };
  }
  if (n > available)
    throw new UsageError({
      code: "N_BEYOND_DATASET",
      message: `--n ${n} is more than the ${available} distinct tasks of ${env.id} (split ${split}) with this config; pass --n ${available} or less, and --num-trials to play each task more than once`,
    });
  return { n, trials: numTrials ?? 1 };
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
    .option(
      "--num-trials <k>",
      `plays of each task per policy, seeded as eval --num-trials seeds them (default 1; a small fixed dataset: up to ${MAX_DEFAULT_TRIALS})`,
      parseInteger("--num-trials", { min: 1, max: 1000 }),
    )
    .option("--seed <seed>", "seed of the task set", parseInteger("--seed", { min: 0 }), 0)
    .option("--split <split>", "task split (default: the environment's evaluation split)", parseText("--split"))
    .option("--config <json|file>", "environment config: JSON, or a .json/.yaml file holding it", parseConfigOption("--config"), "{}")
    .option("--policies <ids>", "comma-separated subset of policies (toolgym list pilots ENV)", parseText("--policies"))
    .option("--json", "print the result as JSON")
    .action(async (envId: string, options: AuditOptions) => {
      const env = getEnvironment(envId);
      const config = parseConfig(env.id, env.configSchema, options.config);
      const spec = getAuditSpec(env.id);
      const chosen = options.policies === undefined ? undefined : splitList("--policies", options.policies);
      const { policies, added } = auditPolicies(env.id, spec, chosen);
      if (added) io.stderr.write(`toolgym: note: ${added} runs too: it is the reference the other policies are judged against\n`);
      const split = resolveSplit(env, options.split);
      const { n, trials } = auditSize(env, split, config, options.n, options.numTrials, io);
      if (n * trials > MAX_AUDIT_N)
        throw new UsageError({
          code: "AUDIT_TOO_LARGE",
          message: `--n ${n} × --num-trials ${trials} is more than ${MAX_AUDIT_N.toLocaleString("en-US")} episodes per policy; lower either`,
        });
      const result = await runAudit({ env, spec, n, trials, seed: options.seed, config, split, policies });
      if (options.json)
        writeJson(io, {
          env: result.env,
          n: result.n,
          trials: result.trials,
          seed: result.seed,
          split: result.split,
          policies: result.policies,
          verdict: result.verdict,
          failures: result.failures,
          not_checked: result.notChecked,
        });
      else io.stdout.write(`${formatAuditTable(result, spec.components)}\n`);
      setExitCode(result.verdict === "pass" ? 0 : 1);
    });
}
