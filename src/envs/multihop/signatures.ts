import type { WatchEpisode, WatchSpec } from "../../core/index.ts";
import type { MultihopTask } from "./index.ts";
import { normalizeAnswer } from "./normalize.ts";

/** An answer longer than this many words is a dump, not an answer (official answers are a few words). */
export const LONG_ANSWER_WORDS = 12;

/**
 * Words a yes/no question opens with (the auxiliaries; 2Wiki's comparison questions: "Are both…", "Do director of…",
 * "Did … come out first"). MuSiQue has no yes/no questions.
 */
const YES_NO_OPENINGS = /^(is|are|was|were|am|do|does|did|can|could|has|have|had|will|would|should|shall|may|might|must)\b/i;

/** A yes or no to a question not put as one: the majority answer of comparison questions, guessed without evidence. */
function yesNoToOpenQuestion(episode: WatchEpisode, task: MultihopTask): boolean {
  const answer = answerText(episode);
  if (answer === null) return false;
  const normalized = normalizeAnswer(answer);
  return (normalized === "yes" || normalized === "no") && !YES_NO_OPENINGS.test(task.example.question.trim());
}

const toolMode = (episode: WatchEpisode) => episode.diagnostics.mode === "search" || episode.diagnostics.mode === "pool";
const answerText = (episode: WatchEpisode) => (typeof episode.diagnostics.answer === "string" ? episode.diagnostics.answer : null);

/**
 * The multi-hop environments' gaming signatures, from what their pilots exploit: answering without looking
 * anything up, an empty answer, a dump of everything (the titles, the question) hoping containment or F1 pays,
 * a yes or no guessed for an open question. The text modes (context, closed_book) read nothing by design, so
 * the reading signatures hold in the tool modes only; the answer signatures hold in every mode.
 */
export const multihopWatch: WatchSpec<MultihopTask> = {
  outcome: "em",
  signatures: [
    {
      name: "answered without reading",
      description: "In a tool mode, the episode answered without reading any paragraph.",
      test: (episode) => toolMode(episode) && answerText(episode) !== null && Number(episode.diagnostics.reads ?? 0) === 0,
    },
    {
      name: "empty answer",
      description: "The answer is empty.",
      test: (episode) => answerText(episode)?.trim() === "",
    },
    {
      name: "long answer",
      description: `The answer has more than ${LONG_ANSWER_WORDS} words (a dump of titles or the question).`,
      test: (episode) => (answerText(episode)?.split(/\s+/).filter(Boolean).length ?? 0) > LONG_ANSWER_WORDS,
    },
    {
      name: "yes or no to an open question",
      description: "The answer is yes or no, and the question is not a yes/no question (it does not open with an auxiliary such as is, are, do, did).",
      test: yesNoToOpenQuestion,
    },
    {
      name: "reward without reading",
      description: "F1 above 0 in a tool mode without a supporting paragraph read (a guess that happened to score).",
      test: (episode) => toolMode(episode) && (episode.total ?? 0) > 0 && episode.components.supporting_read === 0,
    },
  ],
};
