import { createRandom, type AnyEnvironment, type Trajectory } from "../core/index.ts";
import { getPolicies, getPolicy } from "../envs/registry.ts";
import { bootstrapMean, mean } from "../statistics/statistics.ts";
import { hasOwnTrialSeeds, trialSeeds } from "../eval/trials.ts";
import { runEpisode } from "../rollout/run-episode.ts";
import type { AuditFailure, AuditSpec, PolicySummary } from "../core/index.ts";

export interface AuditResult {
  env: string;
  /** Distinct tasks; each policy plays each of them `trials` times. */
  n: number;
  trials: number;
  seed: number;
  split: string;
  policies: Record<string, PolicySummary>;
  verdict: "pass" | "fail";
  failures: string[];
  /** Criteria not judged because a policy they name was left out of `policies` on purpose. */
  notChecked: string[];
}

export interface RunAuditOptions {
  env: AnyEnvironment;
  spec: AuditSpec;
  n: number;
  /** Plays of each task per policy (default 1), seeded as `toolgym eval --num-trials` seeds them. */
  trials?: number;
  seed: number;
  config: unknown;
  split?: string;
  /** A subset of the spec's policies to run (see `auditPolicies`); default: all of them. */
  policies?: string[];
  onEpisode?: (policy: string, trajectory: Trajectory) => void;
}

/**
 * The policies an audit of the subset `chosen` runs: the reference (the spec's first genuine policy, the oracle)
 * joins it when left out, since the pilots are judged against it; without it the audit could only fail, and a
 * failed audit means "the reward can be gamed". `added` names the reference when it was added.
 */
export function auditPolicies(envId: string, spec: AuditSpec, chosen: string[] | undefined): { policies: string[] | undefined; added?: string } {
  if (chosen === undefined) return { policies: undefined };
  const reference = spec.policies.find((id) => getPolicies(envId).some((policy) => policy.id === id && policy.kind === "genuine"));
  return reference && !chosen.includes(reference) ? { policies: [reference, ...chosen], added: reference } : { policies: chosen };
}

/**
 * Runs every policy of the spec over the same n tasks, each `trials` times, and checks the acceptance
 * criteria. A policy's mean and CI are over tasks (each task's trials averaged first), so repeating the
 * few tasks of a small fixed dataset steadies the means without narrowing the CI past what n tasks give.
 */
export async function runAudit(options: RunAuditOptions): Promise<AuditResult> {
  const { env, spec, n, seed, config } = options;
  const trials = options.trials ?? 1;
  const split = options.split ?? env.defaultSplit;
  const seeds = trialSeeds(env, seed, trials);
  const ownSeeds = hasOwnTrialSeeds(env);
  const tasks = Array.from({ length: n }, (_, index) => env.generate({ split, seed, index, config }));
  const summaries: Record<string, PolicySummary> = {};
  for (const policyId of options.policies ?? spec.policies) {
    const policy = getPolicy(env.id, policyId);
    const taskMeans: number[] = [];
    let unscored = 0;
    const components: Record<string, number[]> = Object.fromEntries(spec.components.map((name) => [name, []]));
    const notComputed: Record<string, number> = {};
    for (let index = 0; index < n; index++) {
      const task = tasks[index];
      const totals: number[] = [];
      for (let trial = 0; trial < trials; trial++) {
        const trialSeed = seeds[trial] as number;
        const random = ownSeeds
          ? createRandom("policy", policy.id, split, "trial", trialSeed, index)
          : createRandom("policy", policy.id, split, seed, index, ...(trials > 1 ? [trial] : []));
        const agent = policy.create({ task, random });
        const context = { trial, seed: trialSeed };
        const trajectory = await runEpisode({ env, split, seed, index, config, agent, task, context });
        options.onEpisode?.(policyId, trajectory);
        // A reward that could not be computed is not a score of 0: it is counted and fails the audit.
        const total = trajectory.reward?.total;
        if (typeof total === "number") totals.push(total);
        else unscored++;
        for (const name of spec.components) {
          const value = trajectory.reward?.components[name];
          if (typeof value === "number") components[name]?.push(value);
          // null: the environment could not compute it (absent: not part of this task's reward).
          else if (value === null && typeof total === "number") notComputed[name] = (notComputed[name] ?? 0) + 1;
        }
      }
      if (totals.length > 0) taskMeans.push(mean(totals));
    }
    const interval = bootstrapMean(taskMeans, { seed: `${env.id}/${policyId}/${seed}` });
    summaries[policyId] = {
      mean: interval.mean,
      ci_low: interval.low,
      ci_high: interval.high,
      n: n * trials,
      unscored,
      // A component some episodes could not compute has no mean: the others' would read as the policy's.
      components: Object.fromEntries(
        spec.components.map((name) => [name, components[name]?.length && !notComputed[name] ? mean(components[name] as number[]) : null]),
      ),
      ...(Object.keys(notComputed).length > 0 ? { not_computed: notComputed } : {}),
    };
  }
  // A criterion naming a policy left out of a chosen subset is not judged (and listed as such); with every
  // policy run, one that did not run is a failure.
  const acceptance = spec.acceptance(summaries);
  const unjudged = (failure: AuditFailure) => options.policies !== undefined && failure.code === "POLICY_NOT_RUN";
  const failures = [
    ...Object.entries(summaries)
      .filter(([, summary]) => summary.unscored > 0)
      .map(([id, summary]) => `${id}: ${summary.unscored} of ${n * trials} episodes have no reward (the reward or the episode errored; see the trajectories)`),
    ...acceptance.filter((failure) => !unjudged(failure)).map((failure) => failure.message),
  ];
  const notChecked = acceptance.filter(unjudged).map((failure) => failure.message);
  return { env: env.id, n, trials, seed, split, policies: summaries, verdict: failures.length === 0 ? "pass" : "fail", failures, notChecked };
}

export function formatAuditTable(result: AuditResult, components: string[]): string {
  const header = ["policy", "mean", "95% CI", ...components];
  const rows = Object.entries(result.policies).map(([id, summary]) => [
    id,
    summary.mean.toFixed(3),
    `[${summary.ci_low.toFixed(3)}, ${summary.ci_high.toFixed(3)}]`,
    ...components.map((name) =>
      summary.not_computed?.[name]
        ? "not computed"
        : summary.components[name] === null || summary.components[name] === undefined
          ? "—"
          : (summary.components[name] as number).toFixed(3),
    ),
  ]);
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] as string).length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] as number)).join("  ");
  const lines = [
    `audit ${result.env}  n=${result.n}${result.trials > 1 ? `  trials=${result.trials}` : ""}  seed=${result.seed}  split=${result.split}`,
    line(header),
    line(widths.map((width) => "-".repeat(width))),
    ...rows.map(line),
  ];
  for (const [id, summary] of Object.entries(result.policies))
    for (const [name, count] of Object.entries(summary.not_computed ?? {}))
      lines.push(`${id}: ${name} not computed in ${count} of ${summary.n} episodes; the mean reward is over the components that were computed`);
  lines.push("", `verdict: ${result.verdict.toUpperCase()}`);
  for (const failure of result.failures) lines.push(`  - ${failure}`);
  if (result.notChecked.length > 0) lines.push(`not checked (left out by --policies): ${result.notChecked.join("; ")}`);
  return lines.join("\n");
}
