import type { FormatError, TokenUsage } from "./agent.ts";
import type { TerminationReason } from "./environment.ts";
import type { ErrorRecord } from "./errors.ts";
import type { JsonValue, Message } from "./messages.ts";
import type { RewardBreakdown } from "./reward.ts";

export const TRAJECTORY_SCHEMA_VERSION = 1 as const;

export interface StepRecord {
  turn: number;
  /** Tool name, or `reply` for a text-protocol reply. */
  name: string;
  arguments: JsonValue;
  result: string;
  isError: boolean;
  errorKind?: string;
}

export interface Trajectory {
  schemaVersion: typeof TRAJECTORY_SCHEMA_VERSION;
  id: string;
  env: { id: string; version: string; split: string; seed: number; index: number; config: JsonValue };
  agent: { id: string };
  messages: Message[];
  steps: StepRecord[];
  turns: number;
  maxTurns: number;
  termination: TerminationReason;
  reward: RewardBreakdown | null;
  formatErrors: { count: number; byKind: Record<string, number>; list: FormatError[] };
  errors: ErrorRecord[];
  usage: TokenUsage;
  diagnostics: Record<string, JsonValue>;
}
