import type { FailureSpec } from "../../core/index.ts";

/**
 * What went wrong in a search_plan episode, from its reward components and diagnostics: the categories a
 * reader of a training card needs to see which failures training removed (an unrequested write, a call that
 * does not parse, a loop, a wrong write, a wrong or missing finish). An episode may fall in several.
 */
export const searchPlanFailures: FailureSpec = {
  categories: ["collateral write", "malformed call", "wrong arguments", "runaway repetition", "wrong finish"],
  classify({ metrics, diagnostics, termination, formatErrors }) {
    const found: string[] = [];
    const collateral = (metrics.collateralMutations ?? 0) > 0;
    if (collateral) found.push("collateral write");
    if (formatErrors > 0) found.push("malformed call");
    // stop is 0 when the episode did not finish with the task's status (stopScore in reward.ts)
    const finishedRight = diagnostics?.finishStatus != null && (metrics.stop ?? 0) > 0;
    if (finishedRight && !collateral && formatErrors === 0 && (metrics.outcome ?? 0) < 1) found.push("wrong arguments");
    if ((metrics.repeatedCalls ?? 0) > 0 || termination === "max_turns") found.push("runaway repetition");
    if (!finishedRight) found.push("wrong finish");
    return found;
  },
};
