import { describeEnvironmentContract } from "../_kit/contract.ts";
import { searchPlanOodEnvironment } from "../search_plan_ood/index.ts";
import { searchPlanActEnvironment } from "./index.ts";
import type { SearchPlanTask } from "./task.ts";

/** The lookup answer and every record id of the hidden plan must stay out of the prompt. */
function secrets(value: unknown): string[] {
  const task = value as SearchPlanTask;
  const ids = task.goals.flatMap((goal) =>
    "chain" in goal
      ? goal.chain.ids
      : goal.kind === "link"
        ? [...goal.source.ids, ...goal.target.ids]
        : goal.kind === "copy"
          ? [...goal.from.ids, ...goal.to.ids]
          : [],
  );
  return [...ids, ...(task.answer !== null && task.answer.length >= 4 ? [task.answer] : [])];
}

describeEnvironmentContract({ env: searchPlanActEnvironment, secrets, auditN: 80, invalidConfig: { worldSizes: 40 } });
describeEnvironmentContract({ env: searchPlanOodEnvironment, secrets, auditN: 60, invalidConfig: { maxHop: 5 } });
