import { ProviderError } from "../../core/index.ts";
import type { NlJudge } from "./evaluate.ts";
import { chatModel, complete, type ModelAddress } from "./llm.ts";
import type { Tau2Message } from "./types.ts";

/** tau2's NL_ASSERTION judge: its system prompt, its user prompt and its JSON answer format. */
const SYSTEM_PROMPT = `
        TASK
        - You will be given a list of expected outcomes and a conversation that was collected during a test case run.
        - The conversation is between an agent and a customer.
        - Your job is to evaluate whether the agent satisfies each of the expected outcomes.
        - Grade each expected outcome individually.

        FORMAT
        - Your response should be a JSON object with the following fields:
        - \`reasoning\`: a short explanation for your classification
        - \`metExpectation\`: \`true\` if the agent satisfies the expected outcomes, \`false\` otherwise
        - \`expectedOutcome\`: repeat the expectation from the input that you are grading
        
        Example response structure:
        {
            "results": [
                {
                    "expectedOutcome": "<one of the expected outcomes from the input>",
                    "reasoning": "<reasoning trace>",
                    "metExpectation": <false or true>,
                }
            ]
        }
        `;

/** Python's `repr` of a str, as a list of assertions prints inside tau2's prompt. */
export function pyReprString(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let body = "";
  for (const char of text) {
    if (char === "\\") body += "\\\\";
    else if (char === quote) body += `\\${quote}`;
    else if (char === "\n") body += "\\n";
    else if (char === "\r") body += "\\r";
    else if (char === "\t") body += "\\t";
    else if (char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f) body += `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`;
    else body += char;
  }
  return `${quote}${body}${quote}`;
}

export function judgeUserPrompt(trajectory: readonly Tau2Message[], assertions: readonly string[]): string {
  const conversation = trajectory.map((message) => `${message.role}: ${message.content ?? "None"}`).join("\n");
  return `
        conversation:
        ${conversation}
        
        expectedOutcomes:
        [${assertions.map(pyReprString).join(", ")}]
        `;
}

/** Reads the judge's JSON (tolerating a fenced block around it). */
export function parseJudgeAnswer(text: string): { nl_assertion: string; met: boolean; justification: string }[] {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  let data: unknown;
  try {
    data = JSON.parse(text.slice(start, end + 1));
  } catch {
    throw new ProviderError({ code: "TAU2_JUDGE_MALFORMED", message: `the NL judge's answer is not JSON: ${text.slice(0, 200)}`, retryable: false });
  }
  const results = (data as { results?: unknown }).results;
  if (!Array.isArray(results))
    throw new ProviderError({ code: "TAU2_JUDGE_MALFORMED", message: "the NL judge's answer has no results list", retryable: false });
  return results.map((result: Record<string, unknown>) => ({
    nl_assertion: String(result.expectedOutcome ?? ""),
    met: result.metExpectation === true,
    justification: String(result.reasoning ?? ""),
  }));
}

/** tau2's judge: temperature 0 (`DEFAULT_LLM_NL_ASSERTIONS_ARGS`), no seed, nothing else unless asked. */
export function createNlJudge(
  address: ModelAddress,
  options: { maxTokens?: number | null; chatTemplateKwargs?: Record<string, unknown> | null } = {},
): NlJudge {
  return async (task, trajectory) => {
    const assertions = task.evaluation_criteria?.nl_assertions ?? [];
    const model = chatModel(address, `judge:${task.id}`, {
      ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
      ...(options.chatTemplateKwargs ? { chatTemplateKwargs: options.chatTemplateKwargs } : {}),
    });
    const { message } = await complete(model, [
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: judgeUserPrompt(trajectory, assertions) },
    ]);
    return parseJudgeAnswer(message.content ?? "");
  };
}
