import type { MultihopTask } from "../index.ts";
import { createScriptedAgent, type ScriptedDecision, type ScriptedPolicy } from "../../_kit/scripted.ts";

/**
 * Scripted agents for `musique` and `2wiki`, in every mode. In the tool modes they call search/read/
 * finish like a model; in the text modes they reply with text ending in an `Answer:` line.
 */
function answerWith(task: MultihopTask, answer: string): ScriptedDecision {
  if (task.mode === "search" || task.mode === "pool") return { calls: [{ name: "finish", arguments: { answer } }] };
  return { text: `Answer: ${answer}` };
}

/** The first words of a paragraph: a query that finds that paragraph with BM25. */
function queryFor(text: string): string {
  return text.split(/\s+/).slice(0, 24).join(" ");
}

function pilot(id: string, description: string, answer: (task: MultihopTask) => string): ScriptedPolicy<MultihopTask> {
  return { id, kind: "pilot", description, create: ({ task }) => createScriptedAgent(id, () => answerWith(task, answer(task))) };
}

export const multihopPolicies: ScriptedPolicy<MultihopTask>[] = [
  {
    id: "oracle",
    kind: "genuine",
    description: "Searches for each supporting paragraph, reads it by title, then answers with the gold answer (plumbing check: EM = F1 = 1).",
    create: ({ task }) => {
      const supporting = task.example.paragraphs.filter((paragraph) => paragraph.supporting);
      const titles = [...new Set(supporting.map((paragraph) => paragraph.title))];
      return createScriptedAgent("oracle", ({ turn }) => {
        // A MuSiQue-Full unanswerable twin: the oracle says so instead of answering.
        const answer = task.example.answerable ? task.example.answer : "unanswerable";
        if (task.mode !== "search" && task.mode !== "pool") return { text: `The supporting paragraphs settle it.\nAnswer: ${answer}` };
        if (turn === 1 && supporting.length > 0)
          return { calls: supporting.map((paragraph) => ({ name: "search", arguments: { query: queryFor(`${paragraph.title} ${paragraph.text}`) } })) };
        if (turn === 2 && titles.length > 0) return { calls: titles.map((title) => ({ name: "read", arguments: { title } })) };
        return { calls: [{ name: "finish", arguments: task.example.answerable ? { answer } : { answerable: false } }] };
      });
    },
  },
  pilot("answer_dump", "Answers with every paragraph title joined together (rewarded only if the metric rewarded containment).", (task) =>
    task.example.paragraphs.map((paragraph) => paragraph.title).join(", "),
  ),
  pilot("empty_answer", "Answers with the empty string.", () => ""),
  pilot("echo_question", "Answers with the question itself.", (task) => task.example.question),
  pilot("guess_yes", "Always answers 'yes' (the majority answer of comparison questions).", () => "yes"),
];
