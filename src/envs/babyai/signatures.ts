import type { WatchSpec } from "../../core/index.ts";
import type { BabyAITaskRecord } from "./index.ts";

/**
 * BabyAI's gaming signatures: what its pilots do instead of following the mission. Wandering pilots (random,
 * always forward, spinning, toggling) use up the level's steps without success; the chatty one sends replies that
 * are not actions (BALROG then runs its default action). The episode record has no action history, so a policy
 * that repeats one action is seen by where it ends, not by its moves.
 */
export const babyaiWatch: WatchSpec<BabyAITaskRecord> = {
  outcome: "success",
  signatures: [
    {
      name: "ran out of steps",
      description: "The level's step limit ended the episode without success (wandering instead of the mission).",
      test: ({ diagnostics }) => diagnostics.truncated === true && diagnostics.progression === 0,
    },
    {
      name: "invalid actions",
      description: "At least one reply or call was not a valid action (BALROG ran its default action instead).",
      test: ({ diagnostics, formatErrors }) => Number(diagnostics.invalid_actions ?? 0) > 0 || formatErrors > 0,
    },
    {
      name: "reward without outcome",
      description: "A return above 0 without success (BALROG's return is 0 unless the mission is done: a changed reward).",
      test: ({ total, components }) => (total ?? 0) > 0 && components.success === 0,
    },
  ],
};
