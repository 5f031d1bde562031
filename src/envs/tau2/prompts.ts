import { readAsset } from "./data.ts";
import type { Tau2Task, UserInstructions } from "./types.ts";

/** tau2's texts: the agent's system prompt, its greeting, the user simulator's prompt and stop markers. */

export const FIRST_AGENT_MESSAGE = "Hi! How can I help you today?";

const AGENT_INSTRUCTION = `You are a customer service agent that helps the user according to the <policy> provided below.
In each turn you can either:
- Send a message to the user.
- Make a tool call.
You cannot do both at the same time.

Try to be helpful and always follow the policy. Always make sure you generate valid JSON only.`;

export function agentSystemPrompt(policy: string): string {
  return `<instructions>\n${AGENT_INSTRUCTION}\n</instructions>\n<policy>\n${policy}\n</policy>`;
}

export const STOP = "###STOP###";
export const TRANSFER = "###TRANSFER###";
export const OUT_OF_SCOPE = "###OUT-OF-SCOPE###";

/** tau2's `UserSimulator.is_stop`: a user message carrying any of the three markers ends the run. */
export function isUserStop(text: string | null | undefined): boolean {
  return typeof text === "string" && [STOP, TRANSFER, OUT_OF_SCOPE].some((marker) => text.includes(marker));
}

/** Python's `textwrap.indent(text, prefix)`: the prefix goes on every line that is not whitespace only. */
function indent(text: string, prefix: string): string {
  return text
    .split(/(?<=\n)/)
    .map((line) => (line.trim() === "" ? line : prefix + line))
    .join("");
}

function instructionsText(instructions: string | UserInstructions): string {
  if (typeof instructions === "string") return instructions;
  const lines = [`Domain: ${instructions.domain}`, `Reason for call:\n${indent(instructions.reason_for_call ?? "", "\t")}`];
  if (instructions.known_info != null) lines.push(`Known info:\n${indent(instructions.known_info, "\t")}`);
  if (instructions.unknown_info != null) lines.push(`Unknown info:\n${indent(instructions.unknown_info, "\t")}`);
  lines.push(`Task instructions:\n${indent(instructions.task_instructions ?? "", "\t")}`);
  return lines.join("\n");
}

/** tau2's `str(UserScenario)`: the persona (when given) and the instructions, each indented by a tab. */
export function scenarioText(task: Tau2Task): string {
  const lines: string[] = [];
  const persona = task.user_scenario.persona;
  if (persona != null) lines.push("Persona:", indent(persona, "\t"));
  lines.push("Instructions:", indent(instructionsText(task.user_scenario.instructions), "\t"));
  return lines.join("\n");
}

/** The user simulator's system prompt: tau2's guidelines (the tools variant when the user has tools) and the scenario. */
export function userSystemPrompt(task: Tau2Task, userHasTools: boolean): string {
  const guidelines = readAsset(`user_simulator/simulation_guidelines${userHasTools ? "_tools" : ""}.md`);
  return `${guidelines}\n\n<scenario>\n${scenarioText(task)}\n</scenario>`;
}
