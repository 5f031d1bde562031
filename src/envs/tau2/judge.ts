import { PythonError, PythonFloat, dictGet, dictHas, parsePythonJson, pythonTypeName } from "../../python-semantics/index.ts";
import type { NlJudge } from "./evaluate.ts";
import { chatModel, complete, type ModelAddress } from "./llm.ts";
import { buildModel } from "./pydantic.ts";
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

/** What `for result in value` iterates in Python: a list's items, a str's characters, a dict's keys. */
function pythonItems(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === "string") return [...value];
  if (value instanceof Map) return [...value.keys()];
  if (value !== null && typeof value === "object" && !(value instanceof PythonFloat)) return Object.keys(value);
  throw new PythonError("TypeError", `'${pythonTypeName(value)}' object is not iterable`);
}

/** `result["key"]` on whatever the judge put in its results list. */
function subscript(result: unknown, key: string): unknown {
  if (typeof result === "string") throw new PythonError("TypeError", "string indices must be integers, not 'str'");
  if (Array.isArray(result)) throw new PythonError("TypeError", "list indices must be integers or slices, not str");
  if (result === null || typeof result !== "object" || result instanceof PythonFloat)
    throw new PythonError("TypeError", `'${pythonTypeName(result)}' object is not subscriptable`);
  if (!dictHas(result, key)) throw new PythonError("KeyError", `'${key}'`);
  return dictGet(result, key);
}

const CHECK_FIELDS = [
  ["nl_assertion", "str", null],
  ["met", "bool", null],
  ["justification", "str", null],
] as const;

/**
 * Reads the judge's answer as tau2's `evaluate_nl_assertions` does: `json.loads` of the whole text (a fenced
 * block fails), `.get("results", [])` (no key: no checks, so the assertions pass), each result's
 * `expectedOutcome`, `metExpectation`, `reasoning` built into `NLAssertionCheck` (pydantic lax: `"true"` is
 * True). Anything else raises the PythonError tau2 raises, which its runner retries and then records as an
 * infrastructure error.
 */
export function parseJudgeAnswer(text: string | null): { nl_assertion: string; met: boolean; justification: string }[] {
  if (text === null) throw new PythonError("TypeError", "the JSON object must be str, bytes or bytearray, not NoneType");
  let data: unknown;
  try {
    data = parsePythonJson(text);
  } catch (error) {
    throw new PythonError("JSONDecodeError", `the NL judge's answer is not JSON (${(error as Error).message}): ${text.slice(0, 200)}`);
  }
  if (data === null || typeof data !== "object" || Array.isArray(data) || data instanceof PythonFloat)
    throw new PythonError("AttributeError", `'${pythonTypeName(data)}' object has no attribute 'get'`);
  const results = dictHas(data, "results") ? dictGet(data, "results") : [];
  return pythonItems(results).map((result) => {
    const check = buildModel("NLAssertionCheck", CHECK_FIELDS, {
      nl_assertion: subscript(result, "expectedOutcome"),
      met: subscript(result, "metExpectation"),
      justification: subscript(result, "reasoning"),
    });
    return check as { nl_assertion: string; met: boolean; justification: string };
  });
}

/** tau2's judge: temperature 0 (`DEFAULT_LLM_NL_ASSERTIONS_ARGS`), no seed, nothing else unless asked. */
export function createNlJudge(
  address: ModelAddress,
  options: { maxTokens?: number | null; chatTemplateKwargs?: Record<string, unknown> | null; signal?: AbortSignal } = {},
): NlJudge {
  return async (task, trajectory) => {
    const assertions = task.evaluation_criteria?.nl_assertions ?? [];
    const model = chatModel(address, `judge:${task.id}`, {
      ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
      ...(options.chatTemplateKwargs ? { chatTemplateKwargs: options.chatTemplateKwargs } : {}),
    });
    const { message } = await complete(
      model,
      [
        { role: "system", content: SYSTEM_PROMPT },
        { role: "user", content: judgeUserPrompt(trajectory, assertions) },
      ],
      [],
      options.signal,
    );
    return parseJudgeAnswer(message.content ?? null);
  };
}
