import type { Chain, Descriptor, Goal } from "./task.ts";
import type { Theme } from "./themes.ts";

/** How a start record is named in the task text: by name, by code or by surname + attribute. */
export function describeStart(descriptor: Descriptor): string {
  switch (descriptor.by) {
    case "name":
    case "missing":
      return `the ${descriptor.type} named "${descriptor.name}"`;
    case "code":
      return `the ${descriptor.type} with ${descriptor.field} ${descriptor.code}`;
    case "attribute":
      return `the ${descriptor.type} with "${descriptor.word}" in their name whose ${descriptor.field} is ${descriptor.value}`;
  }
}

/**
 * The record a chain reaches, in words. One relation reads naturally ("the office that the project
 * named "X" is based in"); longer chains name the relations to follow, in order.
 */
export function describeChain(chain: Chain, theme: Theme): string {
  const start = describeStart(chain.start);
  if (chain.relations.length === 0) return start;
  const relations = chain.relations.map((name) => theme.relations.find((relation) => relation.name === name));
  const last = relations[relations.length - 1];
  const endType = last?.to ?? "record";
  if (chain.relations.length === 1) return `the ${endType} that ${start} ${last?.phrase ?? chain.relations[0]}`;
  return `the ${endType} reached from ${start} by following the links ${chain.relations.map((name) => `"${name}"`).join(", then ")}`;
}

/** One sentence stating a goal. */
export function goalSentence(goal: Goal, theme: Theme, describe: (chain: Chain) => string): string {
  switch (goal.kind) {
    case "lookup":
      return goal.field === null ? `What is the name of ${describe(goal.chain)}?` : `What is the ${goal.field} of ${describe(goal.chain)}?`;
    case "update":
      return `Set the ${goal.field} of ${describe(goal.chain)} to ${goal.value}.`;
    case "link":
      return `Link ${describe(goal.source)} to ${describe(goal.target)} with the relation "${goal.relation}".`;
    case "copy":
      return `Copy the ${goal.fromField} of ${describe(goal.from)} into the ${goal.toField} of ${describe(goal.to)}.`;
    case "conditional":
      return `If the ${goal.testField} of ${describe(goal.chain)} is greater than ${goal.threshold}, set its ${goal.field} to ${goal.thenValue}; otherwise set it to ${goal.elseValue}.`;
    case "impossible": {
      const target = describe(goal.chain);
      const endType =
        goal.chain.relations.length === 0
          ? goal.chain.start.type
          : (theme.relations.find((relation) => relation.name === goal.chain.relations[goal.chain.relations.length - 1])?.to ?? "record");
      const type = theme.types.find((spec) => spec.name === endType);
      const field = type?.fields.find((spec) => !spec.code && spec.kind === "enum") ?? type?.fields[0];
      if (goal.asked === "update" && field?.values) return `Set the ${field.name} of ${target} to ${field.values[0]}.`;
      return `What is the ${field?.name ?? "name"} of ${target}?`;
    }
  }
}
