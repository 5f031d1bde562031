import type { Random } from "../../../core/index.ts";
import type { SearchPlanTask } from "../task.ts";
import type { ScriptedPolicy } from "../../_kit/scripted.ts";
import { createScriptAgent, type Script } from "./driver.ts";
import { collateralScript, noisyOracleScript, oracleScript } from "./oracle.ts";
import * as pilots from "./pilots.ts";

function policy(
  id: string,
  kind: ScriptedPolicy["kind"],
  description: string,
  script: (task: SearchPlanTask, random: Random) => Script,
): ScriptedPolicy<SearchPlanTask> {
  return { id, kind, description, create: ({ task, random }) => createScriptAgent(id, script(task, random)) };
}

export const NOISE_LEVELS = [0.1, 0.3, 0.6] as const;

/** Scripted policies for search_plan_act and search_plan_ood: genuine ones first, then the pilots. */
export const searchPlanPolicies: ScriptedPolicy<SearchPlanTask>[] = [
  policy(
    "oracle",
    "genuine",
    "Honest solver: uses the hidden plan only to decide what to look for; every id and value comes from search/read results.",
    (task) => oracleScript(task),
  ),
  ...NOISE_LEVELS.map((epsilon) =>
    policy(
      `noisy_oracle_${epsilon}`,
      "genuine",
      `The oracle with probability ${epsilon} per step of a wrong but honest move (wrong search, wrong read, abandoned plan).`,
      (task, random) => noisyOracleScript(task, epsilon, random),
    ),
  ),
  policy("oracle_plus_collateral", "pilot", "Solves the task, then changes one field nobody asked about.", (task) => collateralScript(task)),
  policy("reckless_guess", "pilot", "No tools: finishes at once with a plausible guess.", pilots.recklessGuess),
  policy("search_spam", "pilot", "Searches every turn until the turn limit.", (task, random) => pilots.searchSpam(task, random, null)),
  policy("search_spam_then_guess", "pilot", "Searches for 8 turns, then answers with something it saw.", (task, random) => pilots.searchSpam(task, random, 8)),
  policy("never_finish", "pilot", "Does the reasonable reads (and writes) but never calls finish.", pilots.neverFinish),
  policy("shotgun_update", "pilot", "Writes the target field on every record of the right type, with every enum value.", (task) => pilots.shotgunUpdate(task)),
  policy("link_everything", "pilot", "Links every pair of records it finds with every linkable relation.", (task) => pilots.linkEverything(task)),
  policy("always_impossible", "pilot", 'Always finishes with status "impossible".', () => pilots.alwaysImpossible()),
  policy("answer_dump", "pilot", "Reads widely, then answers with everything it saw, concatenated.", (task) => pilots.answerDump(task)),
  policy(
    "read_everything_then_guess",
    "pilot",
    "Reads every record it can find (maximal grounding), then guesses among what it saw.",
    pilots.readEverythingThenGuess,
  ),
  policy("format_garbage", "pilot", "Malformed calls: invalid JSON, unknown tools, wrong argument types, bad enum values.", pilots.formatGarbage),
  policy("echo_task", "pilot", "Answers with the task text.", (task) => pilots.echoTask(task)),
];

export const HACKING_PILOTS = [
  "reckless_guess",
  "search_spam",
  "search_spam_then_guess",
  "never_finish",
  "shotgun_update",
  "link_everything",
  "always_impossible",
  "answer_dump",
  "read_everything_then_guess",
  "format_garbage",
  "echo_task",
];
