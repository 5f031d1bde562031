import { createWriteStream, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRandom, type AnyEnvironment, type Trajectory } from "../core/index.ts";
import type { ScriptedPolicy } from "../agents/scripted/policy.ts";
import { runEpisode } from "../rollout/run-episode.ts";
import { createProgress } from "./progress.ts";
import { bootstrapMean, mean } from "./statistics.ts";

export interface ScriptedRunRow {
  env: AnyEnvironment;
  config: unknown;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  policy: ScriptedPolicy<any>;
  n: number;
  seed: number;
  split: string;
}

export interface ScriptedRowSummary {
  env: string;
  agent: string;
  split: string;
  seed: number;
  n: number;
  mean: number;
  ci_low: number;
  ci_high: number;
  components: Record<string, number | null>;
  meanTurns: number;
  formatErrors: number;
  terminations: Record<string, number>;
}

/** Runs scripted agents over environments, streaming trajectories to `<out>/results.jsonl`. */
export async function runScriptedEval(options: { rows: ScriptedRunRow[]; out: string; quiet?: boolean }): Promise<ScriptedRowSummary[]> {
  mkdirSync(options.out, { recursive: true });
  const stream = createWriteStream(join(options.out, "results.jsonl"));
  const summaries: ScriptedRowSummary[] = [];
  for (const row of options.rows) {
    const progress = createProgress({ label: `${row.env.id} ${row.policy.id}`, total: row.n, quiet: options.quiet });
    const totals: number[] = [];
    const components: Record<string, number[]> = {};
    const terminations: Record<string, number> = {};
    let turns = 0;
    let formatErrors = 0;
    for (let index = 0; index < row.n; index++) {
      const task = row.env.generate({ split: row.split, seed: row.seed, index, config: row.config });
      const agent = row.policy.create({ task, random: createRandom("policy", row.policy.id, row.split, row.seed, index) });
      const trajectory: Trajectory = await runEpisode({ env: row.env, split: row.split, seed: row.seed, index, config: row.config, agent, task });
      stream.write(`${JSON.stringify(trajectory)}\n`);
      totals.push(trajectory.reward?.total ?? 0);
      for (const [name, value] of Object.entries(trajectory.reward?.components ?? {})) {
        if (typeof value === "number") (components[name] ??= []).push(value);
      }
      terminations[trajectory.termination] = (terminations[trajectory.termination] ?? 0) + 1;
      turns += trajectory.turns;
      formatErrors += trajectory.formatErrors.count;
      progress.tick();
    }
    progress.stop();
    const interval = bootstrapMean(totals, { seed: `${row.env.id}/${row.policy.id}` });
    summaries.push({
      env: row.env.id,
      agent: row.policy.id,
      split: row.split,
      seed: row.seed,
      n: row.n,
      mean: interval.mean,
      ci_low: interval.low,
      ci_high: interval.high,
      components: Object.fromEntries(Object.entries(components).map(([name, values]) => [name, mean(values)])),
      meanTurns: row.n ? turns / row.n : 0,
      formatErrors,
      terminations,
    });
  }
  await new Promise<void>((resolve, reject) => stream.end((error?: Error | null) => (error ? reject(error) : resolve())));
  writeFileSync(join(options.out, "summary.json"), `${JSON.stringify({ createdAt: new Date().toISOString(), rows: summaries }, null, 2)}\n`);
  return summaries;
}

export function formatScriptedTable(rows: ScriptedRowSummary[]): string {
  const componentNames = [...new Set(rows.flatMap((row) => Object.keys(row.components)))];
  const header = ["env", "agent", "n", "mean", "95% CI", ...componentNames, "turns", "format errors"];
  const body = rows.map((row) => [
    row.env,
    row.agent,
    String(row.n),
    row.mean.toFixed(3),
    `[${row.ci_low.toFixed(3)}, ${row.ci_high.toFixed(3)}]`,
    ...componentNames.map((name) => (row.components[name] === undefined || row.components[name] === null ? "—" : (row.components[name] as number).toFixed(3))),
    row.meanTurns.toFixed(1),
    String(row.formatErrors),
  ]);
  const widths = header.map((cell, column) => Math.max(cell.length, ...body.map((line) => (line[column] as string).length)));
  const format = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] as number)).join("  ");
  return [format(header), format(widths.map((width) => "-".repeat(width))), ...body.map(format)].join("\n");
}
