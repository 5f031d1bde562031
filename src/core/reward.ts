import { RewardError, type ErrorRecord } from "./errors.ts";
import type { JsonValue } from "./messages.ts";

/**
 * A reward split into named components, each in [0, 1]. A component that could not be computed is
 * `null` with an entry in `errors`, never a silent 0.
 */
export interface RewardBreakdown {
  total: number | null;
  components: Record<string, number | null>;
  /** How `total` was combined from the components (written in each environment's about.md). */
  formula: string;
  errors: ErrorRecord[];
  diagnostics: Record<string, JsonValue>;
}

export function checkUnitInterval(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    throw new RewardError({
      code: "REWARD_OUT_OF_RANGE",
      message: `reward component '${name}' = ${value} is outside [0, 1]; fix the component, scores are checked, never clamped`,
    });
  }
  return value;
}

/** Runs each component; a throwing component becomes null plus an error record. */
export function scoreComponents(components: Record<string, () => number>): { values: Record<string, number | null>; errors: ErrorRecord[] } {
  const values: Record<string, number | null> = {};
  const errors: ErrorRecord[] = [];
  for (const [name, score] of Object.entries(components)) {
    try {
      values[name] = checkUnitInterval(name, score());
    } catch (error) {
      values[name] = null;
      const message = error instanceof Error ? error.message : String(error);
      errors.push({
        type: "RewardError",
        code: RewardError.isInstance(error) ? error.code : "REWARD_FAILED",
        message: `component '${name}': ${message}`,
        boundary: "reward",
      });
    }
  }
  return { values, errors };
}
