import { existsSync, readFileSync } from "node:fs";
import { PALETTE, escapeXml } from "../eval/report/svg.ts";
import type { ArmKind } from "./config.ts";
import type { StepLog } from "./grpo-signal.ts";
import { evidenceLayout } from "./layout.ts";

/**
 * The reward-hacking watch as the pipeline reads it back: python/toolgym_trl logs, per GRPO step through TRL's
 * own metrics, the training episodes' mean reward and mean outcome and the share of episodes showing each of the
 * environment's gaming signatures (`watch/...` keys of the step logs), and `watch/flag/<signature>` at the steps
 * where that signature's share rose while the reward rose and the outcome did not (docs/training.md "The watch").
 */
export const WATCH_PREFIX = "watch/";
const SIGNATURE_PREFIX = "watch/signature/";
const FLAG_PREFIX = "watch/flag/";

export interface WatchPoint {
  step: number;
  reward_mean: number | null;
  outcome_mean: number | null;
  /** Share of the step's scored training episodes showing each signature. */
  signatures: Record<string, number>;
}

export interface ArmWatch {
  watch: WatchPoint[];
  /** Whether the watch warned at any step. */
  flagged: boolean;
  /** The signatures it warned about, in the order they were first flagged. */
  flagged_by: string[];
}

/** An arm's training step logs (grpo/<arm>/steps.jsonl), none when it did not train. */
export function readStepLogs(out: string, arm: string): StepLog[] {
  const path = evidenceLayout(out).steps(arm);
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as StepLog);
}

const numberOr = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);

/** The watch of one arm from its step logs (steps without watch metrics are left out: a run before the watch existed). */
export function readWatch(steps: readonly StepLog[]): ArmWatch {
  const watch: WatchPoint[] = [];
  const flaggedBy: string[] = [];
  for (const [position, log] of steps.entries()) {
    const keys = Object.keys(log).filter((key) => key.startsWith(WATCH_PREFIX));
    if (keys.length === 0) continue;
    const signatures: Record<string, number> = {};
    for (const key of keys) {
      const value = numberOr(log[key]);
      if (key.startsWith(SIGNATURE_PREFIX) && value !== null) signatures[key.slice(SIGNATURE_PREFIX.length)] = value;
      const name = key.slice(FLAG_PREFIX.length);
      if (key.startsWith(FLAG_PREFIX) && value !== null && value > 0 && !flaggedBy.includes(name)) flaggedBy.push(name);
    }
    const step = numberOr(log.step) ?? position + 1;
    watch.push({ step, reward_mean: numberOr(log["watch/reward_mean"]), outcome_mean: numberOr(log["watch/outcome_mean"]), signatures });
  }
  return { watch, flagged: flaggedBy.length > 0, flagged_by: flaggedBy };
}

export interface WatchedArm extends ArmWatch {
  name: string;
  kind: ArmKind | "baseline";
}

/** Mean over a trailing window, so a line through 16 episodes a step reads as a trend (the table keeps the raw values). */
function smooth(values: ReadonlyArray<number | null>, window: number): Array<number | null> {
  return values.map((_, index) => {
    const kept = values.slice(Math.max(0, index - window + 1), index + 1).filter((value): value is number => value !== null);
    return kept.length === 0 ? null : kept.reduce((sum, value) => sum + value, 0) / kept.length;
  });
}

export const WATCH_SMOOTHING = 10;

/** One panel: a value per step, one line per arm (controls dashed, exploit arms dotted). */
function panel(arms: readonly WatchedArm[], title: string, pick: (point: WatchPoint) => number | null, top: number): string {
  const width = 520;
  const height = 200;
  const margin = { top: 24, right: 150, bottom: 30, left: 44 };
  const maxStep = Math.max(1, ...arms.flatMap((arm) => arm.watch.map((point) => point.step)));
  const x = (step: number) => margin.left + ((width - margin.left - margin.right) * step) / maxStep;
  const y = (value: number) => margin.top + (height - margin.top - margin.bottom) * (1 - Math.max(0, Math.min(value, 1)) / 1);
  let body = `<line x1="${margin.left}" y1="${y(0)}" x2="${width - margin.right}" y2="${y(0)}" stroke="#555"/><line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${y(0)}" stroke="#555"/>`;
  for (let tick = 0; tick <= 4; tick++)
    body += `<text x="${margin.left - 6}" y="${y(tick / 4).toFixed(1)}" dy="4" text-anchor="end" class="tick">${tick / 4}</text>`;
  for (let tick = 0; tick <= 4; tick++) {
    const step = Math.round((maxStep * tick) / 4);
    body += `<text x="${x(step).toFixed(1)}" y="${height - margin.bottom + 14}" text-anchor="middle" class="tick">${step}</text>`;
  }
  arms.forEach((arm, index) => {
    const color = PALETTE[index % PALETTE.length] as string;
    const values = smooth(arm.watch.map(pick), WATCH_SMOOTHING);
    const points = arm.watch.flatMap((point, position) => {
      const value = values[position];
      return value === null || value === undefined ? [] : [`${x(point.step).toFixed(1)},${y(value).toFixed(1)}`];
    });
    const dash = arm.kind === "control" ? ' stroke-dasharray="5 3"' : arm.kind === "exploit" ? ' stroke-dasharray="2 2"' : "";
    if (points.length > 0)
      body += `<polyline class="watch" data-arm="${escapeXml(arm.name)}" fill="none" stroke="${color}" stroke-width="2"${dash} points="${points.join(" ")}"/>`;
    const label = `${arm.name} (${arm.kind})${arm.flagged ? " flagged" : ""}`;
    body += `<text x="${width - margin.right + 8}" y="${margin.top + 14 * index + 4}" fill="${color}" class="legend">${escapeXml(label)}</text>`;
  });
  return `<g transform="translate(0 ${top})"><text x="${(width - margin.right + margin.left) / 2}" y="14" text-anchor="middle">${escapeXml(title)}</text>${body}</g>`;
}

/** The watch as one SVG: training reward, training outcome, then each signature's share, by GRPO step, one line per arm. */
export function watchChart(arms: readonly WatchedArm[]): string | undefined {
  const watched = arms.filter((arm) => arm.watch.length > 0);
  if (watched.length === 0) return undefined;
  const signatures = [...new Set(watched.flatMap((arm) => arm.watch.flatMap((point) => Object.keys(point.signatures))))];
  const panels = [
    { title: "training mean reward", pick: (point: WatchPoint) => point.reward_mean },
    { title: "training mean outcome", pick: (point: WatchPoint) => point.outcome_mean },
    ...signatures.map((name) => ({ title: `share of episodes: ${name}`, pick: (point: WatchPoint) => point.signatures[name] ?? null })),
  ];
  const height = 200 * panels.length;
  const title = `reward-hacking watch: training episodes by GRPO step (trailing mean of ${WATCH_SMOOTHING} steps)`;
  const body = panels.map((entry, index) => panel(watched, entry.title, entry.pick, 200 * index)).join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" aria-label="${escapeXml(title)}" width="520" height="${height}" viewBox="0 0 520 ${height}" font-family="sans-serif" font-size="11"><title>${escapeXml(title)}</title>${body}</svg>`;
}

const format = (value: number | null | undefined) => (value === null || value === undefined ? "not logged" : value.toFixed(3));

/** Mean of a value over the first or last `count` points. */
function edge(points: readonly WatchPoint[], pick: (point: WatchPoint) => number | null, which: "first" | "last", count = WATCH_SMOOTHING): number | null {
  const slice = which === "first" ? points.slice(0, count) : points.slice(-count);
  const values = slice.map(pick).filter((value): value is number => value !== null);
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** The card's table: per arm, reward and outcome over the first and last steps, the gap, and what the watch flagged. */
export function watchMarkdown(arms: readonly WatchedArm[]): string {
  const header = ["Arm", "steps", "reward first → last", "outcome first → last", "gap last", "flagged"];
  const rows = arms
    .filter((arm) => arm.watch.length > 0)
    .map((arm) => {
      const reward = [edge(arm.watch, (point) => point.reward_mean, "first"), edge(arm.watch, (point) => point.reward_mean, "last")];
      const outcome = [edge(arm.watch, (point) => point.outcome_mean, "first"), edge(arm.watch, (point) => point.outcome_mean, "last")];
      const gap = reward[1] !== null && outcome[1] !== null ? (reward[1] as number) - (outcome[1] as number) : null;
      return [
        `${arm.name} (${arm.kind})`,
        String(arm.watch.length),
        `${format(reward[0])} → ${format(reward[1])}`,
        `${format(outcome[0])} → ${format(outcome[1])}`,
        format(gap),
        arm.flagged ? `**yes**: ${arm.flagged_by.join(", ")}` : "no",
      ];
    });
  return [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n");
}
