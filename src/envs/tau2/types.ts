/** tau2's task and message shapes, as they appear in its JSON task files and trajectories. */

export type Requestor = "user" | "assistant";

export interface Tau2ToolCall {
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
  requestor?: Requestor;
}

export interface Tau2Message {
  role: "system" | "user" | "assistant" | "tool";
  content?: string | null;
  tool_calls?: Tau2ToolCall[] | null;
  /** Tool messages: the call id, and whether the tool raised. */
  id?: string;
  error?: boolean;
  requestor?: Requestor;
  /** When the message was made (tau2's `get_now()` ISO text) and, for model messages, its token usage. */
  timestamp?: string | null;
  usage?: { completion_tokens: number; prompt_tokens: number } | null;
}

export interface EnvFunctionCall {
  env_type: "user" | "assistant";
  func_name: string;
  arguments?: Record<string, unknown>;
}

export interface EnvAssertion extends EnvFunctionCall {
  assert_value?: boolean;
  message?: string | null;
}

export interface InitialState {
  initialization_data?: { agent_data?: Record<string, unknown> | null; user_data?: Record<string, unknown> | null } | null;
  initialization_actions?: EnvFunctionCall[] | null;
  message_history?: Tau2Message[] | null;
}

export interface Tau2Action {
  action_id: string;
  requestor?: Requestor;
  name: string;
  arguments: Record<string, unknown>;
  info?: string | null;
  compare_args?: string[] | null;
}

export type RewardType = "DB" | "ENV_ASSERTION" | "NL_ASSERTION" | "ACTION" | "COMMUNICATE";

export interface EvaluationCriteria {
  actions?: Tau2Action[] | null;
  env_assertions?: EnvAssertion[] | null;
  communicate_info?: string[] | null;
  nl_assertions?: string[] | null;
  reward_basis?: RewardType[];
}

export interface UserInstructions {
  domain?: string;
  reason_for_call?: string;
  known_info?: string | null;
  unknown_info?: string | null;
  task_instructions?: string;
}

export interface Tau2Task {
  id: string;
  description?: unknown;
  user_scenario: { persona?: string | null; instructions: string | UserInstructions };
  ticket?: string | null;
  initial_state?: InitialState | null;
  evaluation_criteria?: EvaluationCriteria | null;
}

/** tau2's default reward basis when a task gives none. */
export const DEFAULT_REWARD_BASIS: RewardType[] = ["DB", "COMMUNICATE"];

export function rewardBasis(task: Tau2Task): RewardType[] {
  return task.evaluation_criteria?.reward_basis ?? DEFAULT_REWARD_BASIS;
}
