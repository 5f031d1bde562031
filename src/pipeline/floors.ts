import type { Report } from "../eval/report/index.ts";
import type { PipelineConfig } from "./config.ts";
import { interval, rewardOf, runsUnder, taskMeans } from "./evidence.ts";
import { evidenceLayout } from "./layout.ts";
import { pipelineSuite } from "./stages.ts";

interface Interval {
  mean: number;
  ci_low: number;
  ci_high: number;
}

export interface FloorPilot extends Interval {
  policy: string;
  /** Tasks with a reward. */
  n: number;
}

/** What the environment's scripted pilots earn on one suite row's tasks: every pilot, the do-nothing one and the best. */
export interface FloorRow {
  benchmark: string;
  env: string;
  pilots: FloorPilot[];
  /** The pilot the config names as doing nothing for this environment (null: none named, or it did not run). */
  doNothing: FloorPilot | null;
  /** The pilot with the highest mean reward (the first in the environment's order on a tie). */
  best: FloorPilot | null;
}

/** The floors of every suite row, from the runs the eval-pre stage's pilots wrote (rows without any are left out). */
export function floorRows(config: PipelineConfig, out: string): FloorRow[] {
  const layout = evidenceLayout(out);
  return pipelineSuite(config).rows.flatMap((row): FloorRow[] => {
    const pilots = runsUnder(layout.floors(row.benchmark)).map((run): FloorPilot => {
      const policy = run.metadata.agent.kind === "scripted" ? run.metadata.agent.id : run.metadata.model.label;
      const rewards = taskMeans(run, rewardOf);
      return { policy, n: rewards.length, ...interval(rewards, `floor/${row.benchmark}/${policy}`) };
    });
    if (pilots.length === 0) return [];
    const named = config.eval.floors.doNothing[row.env];
    const best = pilots.reduce((top, pilot) => (pilot.mean > top.mean ? pilot : top));
    return [{ benchmark: row.benchmark, env: row.env, pilots, doNothing: pilots.find((pilot) => pilot.policy === named) ?? null, best }];
  });
}

/** summary.json's floors: the do-nothing and the best pilot of each row. */
export function floorSummary(rows: readonly FloorRow[]): Array<{ benchmark: string; policy: string; role: "do-nothing" | "best pilot"; mean: number }> {
  return rows.flatMap((row) => [
    ...(row.doNothing ? [{ benchmark: row.benchmark, policy: row.doNothing.policy, role: "do-nothing" as const, mean: row.doNothing.mean }] : []),
    ...(row.best ? [{ benchmark: row.benchmark, policy: row.best.policy, role: "best pilot" as const, mean: row.best.mean }] : []),
  ]);
}

const format = (value: number) => (Number.isFinite(value) ? value.toFixed(3) : "not computed");

/**
 * The card's floors: per row, the do-nothing and best pilots beside every model's mean reward, a model below
 * a floor flagged, and a sentence for each row where no model beats the do-nothing floor.
 */
export function floorsMarkdown(rows: readonly FloorRow[], report: Report): string {
  const cellsOf = (benchmark: string) => report.rows.find((row) => row.benchmark === benchmark && row.metric === "reward")?.cells ?? [];
  const models = [...new Set(rows.flatMap((row) => cellsOf(row.benchmark).map((cell) => cell.model)))];
  const header = ["Benchmark", "n", "do-nothing", "best pilot", ...models];
  const pilot = (found: FloorPilot | null) => (found ? `${format(found.mean)} (${found.policy})` : "not named");
  const lines: string[] = [];
  const table = rows.map((row) => {
    const cells = cellsOf(row.benchmark);
    const values = models.map((model) => {
      const cell = cells.find((candidate) => candidate.model === model);
      if (!cell) return "—";
      const flags = [
        ...(row.doNothing && cell.mean < row.doNothing.mean ? ["**below do-nothing**"] : []),
        ...(row.best && cell.mean < row.best.mean ? ["below best pilot"] : []),
      ];
      return `${format(cell.mean)}${flags.length > 0 ? ` (${flags.join(", ")})` : ""}`;
    });
    const floor = row.doNothing ?? row.best;
    const beaten = cells.filter((cell) => floor && cell.mean > floor.mean).map((cell) => cell.model);
    if (floor && cells.length > 0 && beaten.length === 0)
      lines.push(
        `- **${row.benchmark}: no model beats the ${row.doNothing ? "do-nothing" : "best pilot's"} floor** (${floor.policy}: ${format(floor.mean)}); ${cells.map((cell) => `${cell.model} ${format(cell.mean)}`).join(", ")}.`,
      );
    return [row.benchmark, String(row.best?.n ?? row.doNothing?.n ?? 0), pilot(row.doNothing), pilot(row.best), ...values];
  });
  return [
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...table.map((row) => `| ${row.join(" | ")} |`),
    ...(lines.length > 0 ? ["", ...lines] : []),
  ].join("\n");
}
