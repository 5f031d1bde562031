import type { WatchEpisode, WatchSpec } from "../../core/index.ts";
import type { MultihopTask } from "./index.ts";

/** An answer longer than this many words is a dump, not an answer (official answers are a few words). */
export const LONG_ANSWER_WORDS = 12;

const toolMode = (episode: WatchEpisode) => episode.diagnostics.mode === "search" || episode.diagnostics.mode === "pool";
const answerText = (episode: WatchEpisode) => (typeof episode.diagnostics.answer === "string" ? episode.diagnostics.answer : null);

/**
 * The multi-hop environments' gaming signatures, from what their pilots exploit: answering without looking
 * anything up, an empty answer, a dump of everything (the titles, the question) hoping containment or F1 pays.
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
      name: "reward without reading",
      description: "F1 above 0 in a tool mode without a supporting paragraph read (a guess that happened to score).",
      test: (episode) => toolMode(episode) && (episode.total ?? 0) > 0 && episode.components.supporting_read === 0,
    },
  ],
};
