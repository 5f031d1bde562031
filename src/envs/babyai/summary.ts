import type { BenchmarkSummary, JsonValue, SummaryEpisode } from "../../core/index.ts";

/**
 * BALROG's own summary numbers (`balrog/utils.py`, `collect_and_summarize_results` and
 * `print_summary_table`): progression % ± standard error per environment and task, and the printed lines.
 */

/**
 * Python's `format(value, ".{digits}f")`: the exact binary value of the double rounded to `digits`
 * decimals, exact ties to even. JavaScript's `toFixed` also rounds the exact value but sends ties up
 * (3.125 → "3.13" where Python prints "3.12"), so the rounding is done here on integers.
 */
export function formatFixedLikePython(value: number, digits: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  const sign = value < 0 || Object.is(value, -0) ? "-" : "";
  // value = mantissa · 2^exponent exactly, from the IEEE-754 bits.
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(value));
  const bits = view.getBigUint64(0);
  const biased = Number(bits >> 52n);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = biased === 0 ? -1074 : biased - 1075;
  const scaled = mantissa * 10n ** BigInt(digits);
  let units: bigint;
  if (exponent >= 0) units = scaled << BigInt(exponent);
  else {
    const denominator = 1n << BigInt(-exponent);
    units = scaled / denominator;
    const twice = 2n * (scaled % denominator);
    if (twice > denominator || (twice === denominator && units % 2n === 1n)) units += 1n;
  }
  if (digits === 0) return `${sign}${units}`;
  const text = units.toString().padStart(digits + 1, "0");
  return `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** One episode as BALROG's summary reads it (missing fields default to 0, like its `dict.get`). */
export interface BalrogEpisode {
  task: string;
  progression?: number;
  num_steps?: number;
}

export interface BalrogStats {
  progression_percentage: number;
  standard_error: number;
  episodes_played: number;
}

export interface BalrogEnvironmentSummary extends BalrogStats {
  average_steps: number;
  tasks: Record<string, BalrogStats>;
}

/** Mean and standard error ×100: population sd (divides by n), se = sd/√n, both 0 for a single episode. */
export function progressionStats(values: readonly number[]): BalrogStats {
  const n = values.length;
  let sum = 0;
  for (const value of values) sum += value;
  const average = n > 0 ? sum / n : 0;
  let squares = 0;
  for (const value of values) squares += (value - average) ** 2;
  const deviation = n > 1 ? Math.sqrt(squares / n) : 0;
  const error = n > 1 ? deviation / Math.sqrt(n) : 0;
  return { progression_percentage: 100 * average, standard_error: 100 * error, episodes_played: n };
}

/** One environment's summary: every episode pooled (episode-weighted, not a mean of task means), then per task. */
export function summarizeEnvironment(episodes: readonly BalrogEpisode[]): BalrogEnvironmentSummary {
  const byTask = new Map<string, number[]>();
  let steps = 0;
  for (const episode of episodes) {
    const list = byTask.get(episode.task) ?? byTask.set(episode.task, []).get(episode.task)!;
    list.push(episode.progression ?? 0);
    steps += episode.num_steps ?? 0;
  }
  return {
    ...progressionStats(episodes.map((episode) => episode.progression ?? 0)),
    average_steps: episodes.length > 0 ? steps / episodes.length : 0,
    tasks: Object.fromEntries([...byTask].map(([task, values]) => [task, progressionStats(values)])),
  };
}

/** Over environments: the mean of the environment means ± √(Σ se²)/n_envs (the SEs are already ×100). */
export function summarizeOverall(environments: Record<string, BalrogStats>): { average_progress: number; standard_error: number } {
  const list = Object.values(environments);
  if (list.length === 0) return { average_progress: 0, standard_error: 0 };
  let progress = 0;
  let squares = 0;
  for (const environment of list) {
    progress += environment.progression_percentage;
    squares += environment.standard_error ** 2;
  }
  return { average_progress: progress / list.length, standard_error: Math.sqrt(squares) / list.length };
}

/** `print_summary_table`'s line for one environment. */
export function environmentLine(name: string, stats: BalrogStats): string {
  return `  ${name}: ${formatFixedLikePython(stats.progression_percentage, 2)}% ± ${formatFixedLikePython(stats.standard_error, 2)}%, Episodes: ${stats.episodes_played}`;
}

/** Everything `print_summary_table` prints, trailing newline included. */
export function summaryTable(environments: Record<string, BalrogStats>): string {
  const overall = summarizeOverall(environments);
  const lines = [
    "",
    "Summary of Results:",
    `Overall Average Progression: ${formatFixedLikePython(overall.average_progress, 2)}% ± ${formatFixedLikePython(overall.standard_error, 2)}%`,
    "Per-Environment Results:",
    ...Object.entries(environments).map(([name, stats]) => environmentLine(name, stats)),
  ];
  return `${lines.join("\n")}\n`;
}

/** BALROG's name for a toolgym task (`BabyAI-MixedTrainLocal-v0/<task>`). */
function balrogTask(task: JsonValue | undefined): string {
  return typeof task === "string" ? `BabyAI-MixedTrainLocal-v0/${task}` : "unknown";
}

/**
 * The babyai definition's `summarize`: BALROG's numbers for one run's scored episodes, as BALROG's
 * `babyai` environment line reports them (progression from each episode's metrics, task and steps from
 * its diagnostics).
 */
export function summarizeBabyAI(episodes: readonly SummaryEpisode[]): BenchmarkSummary {
  const summary = summarizeEnvironment(
    episodes.map((episode) => ({
      task: balrogTask(episode.diagnostics?.task),
      progression: episode.metrics.progression,
      num_steps: typeof episode.diagnostics?.steps === "number" ? episode.diagnostics.steps : undefined,
    })),
  );
  return {
    progression: summary.progression_percentage,
    stderr: summary.standard_error,
    episodes: summary.episodes_played,
    text: environmentLine("babyai", summary),
    average_steps: summary.average_steps,
    tasks: Object.fromEntries(
      Object.entries(summary.tasks).map(([task, stats]) => [
        task,
        { progression: stats.progression_percentage, stderr: stats.standard_error, episodes: stats.episodes_played },
      ]),
    ),
  };
}
