import type { SearchPlanTask } from "./task.ts";

/**
 * What the agent must find out rather than read: every record id on the hidden plan's chains and the lookup
 * answer (shorter answers, such as small numbers, would match unrelated text by chance).
 */
export function searchPlanSecrets(task: SearchPlanTask): string[] {
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
