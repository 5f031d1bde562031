import { IN_DISTRIBUTION_DEFAULTS } from "./config.ts";
import { defineSearchPlanEnvironment } from "./define.ts";
import { IN_DISTRIBUTION_THEMES } from "./themes.ts";

export type { SearchPlanConfig } from "./config.ts";
export type { SearchPlanTask } from "./task.ts";
export { defineSearchPlanEnvironment } from "./define.ts";

/**
 * search_plan_act: closed-book, multi-turn tool use over a procedurally generated database. The agent
 * searches, reads, updates and links records to reach a goal stated in words, then calls finish.
 */
export const searchPlanActEnvironment = defineSearchPlanEnvironment({
  id: "search_plan_act",
  title: "search_plan_act",
  description: "Find, read, update and link records of a generated fictional database to reach a stated goal (1-4 hops).",
  splits: ["train", "eval"],
  defaultSplit: "eval",
  defaults: IN_DISTRIBUTION_DEFAULTS,
  themesFor: () => IN_DISTRIBUTION_THEMES,
});
