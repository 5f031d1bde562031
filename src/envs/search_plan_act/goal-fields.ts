import type { Chain, Goal, Requirement } from "./task.ts";

/** What goals read and write, as "id.field" keys and requirements (pure bookkeeping over goals, once per task). */

/** The start record's field a chain's descriptor states (a code or an attribute), read by the agent to find it. */
function startField(chain: Chain): string[] {
  return chain.start.by === "code" || chain.start.by === "attribute" ? [`${chain.ids[0]}.${chain.start.field}`] : [];
}

/** The id of the record a chain ends on. */
function end(chain: Chain): string {
  return chain.ids[chain.ids.length - 1] as string;
}

/** Fields each goal reads and writes, so composite parts never interfere. */
export function touchedFields(goal: Goal): { reads: string[]; writes: string[] } {
  switch (goal.kind) {
    case "update":
      return { reads: startField(goal.chain), writes: [`${end(goal.chain)}.${goal.field}`] };
    case "copy":
      return { reads: [...startField(goal.from), ...startField(goal.to), `${end(goal.from)}.${goal.fromField}`], writes: [`${end(goal.to)}.${goal.toField}`] };
    case "conditional":
      return { reads: [...startField(goal.chain), `${end(goal.chain)}.${goal.testField}`], writes: [`${end(goal.chain)}.${goal.field}`] };
    case "link":
      return { reads: [...startField(goal.source), ...startField(goal.target)], writes: [] };
    default:
      return { reads: [], writes: [] };
  }
}

/** The final-state requirements the goals set (fields written, links added), checked by the reward. */
export function requirementsOf(goals: Goal[]): Requirement[] {
  const requirements: Requirement[] = [];
  for (const goal of goals) {
    if (goal.kind === "update") requirements.push({ kind: "field", id: end(goal.chain), field: goal.field, value: goal.value, mustBeGrounded: false });
    if (goal.kind === "conditional") requirements.push({ kind: "field", id: end(goal.chain), field: goal.field, value: goal.value, mustBeGrounded: false });
    if (goal.kind === "copy") requirements.push({ kind: "field", id: end(goal.to), field: goal.toField, value: goal.value, mustBeGrounded: true });
    if (goal.kind === "link") requirements.push({ kind: "link", source: end(goal.source), relation: goal.relation, target: end(goal.target) });
  }
  return requirements;
}
