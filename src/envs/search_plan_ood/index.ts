import { OOD_DEFAULTS } from "../search_plan_act/config.ts";
import { defineSearchPlanEnvironment } from "../search_plan_act/define.ts";
import { OOD_THEMES } from "../search_plan_act/themes.ts";

/**
 * search_plan_ood: the same tools and reward as search_plan_act with held-out themes, 4-6 hop chains,
 * more composite and conditional goals, closer distractors, larger worlds and paginated search.
 */
export const searchPlanOodEnvironment = defineSearchPlanEnvironment({
  id: "search_plan_ood",
  title: "search_plan_ood",
  seedSuite: { order: 3, n: 100, quickN: 10 },
  description: "Out-of-distribution search_plan_act: held-out themes, 4-6 hops, larger worlds, paginated search.",
  splits: ["ood"],
  defaultSplit: "ood",
  defaults: OOD_DEFAULTS,
  themesFor: () => OOD_THEMES,
});
