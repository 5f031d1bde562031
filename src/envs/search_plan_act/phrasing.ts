import type { Chain, Descriptor, Goal } from "./task.ts";
import type { FieldSpec, Theme } from "./themes.ts";

/** The field spec of `type.name`, or undefined when the theme has no such field. */
function fieldOf(theme: Theme, type: string, name: string): FieldSpec | undefined {
  return theme.types.find((spec) => spec.name === type)?.fields.find((field) => field.name === name);
}

/** How text names a field: its phrase ("hire date"); the raw name only for a field the theme lacks. */
export function fieldPhrase(theme: Theme, type: string, name: string): string {
  return fieldOf(theme, type, name)?.phrase ?? name;
}

/** Written phrases by field (every task text states one or more: each is worked out once; theme data never changes). */
const writtenPhrases = new WeakMap<FieldSpec, string>();

/**
 * The phrase of a field the agent must write. `update_record` takes the field's name, so the name is
 * added when the phrase does not contain every word of it ("opening date (field `opened`)"), and
 * left out when it does ("hire date" for `hire_date`).
 */
export function writtenFieldPhrase(theme: Theme, type: string, name: string): string {
  const field = fieldOf(theme, type, name);
  if (!field) return writtenPhrase(name, name);
  let written = writtenPhrases.get(field);
  if (written === undefined) writtenPhrases.set(field, (written = writtenPhrase(field.phrase, name)));
  return written;
}

function writtenPhrase(phrase: string, name: string): string {
  const words = new Set(phrase.toLowerCase().split(/[^a-z0-9]+/));
  return name.split("_").every((word) => words.has(word)) ? phrase : `${phrase} (field \`${name}\`)`;
}

/** How a start record is named in the task text: by name, by code or by surname + attribute. */
export function describeStart(descriptor: Descriptor, theme: Theme): string {
  switch (descriptor.by) {
    case "name":
    case "missing":
      return `the ${descriptor.type} named "${descriptor.name}"`;
    case "code":
      return `the ${descriptor.type} with ${fieldPhrase(theme, descriptor.type, descriptor.field)} ${descriptor.code}`;
    case "attribute":
      return `the ${descriptor.type} with "${descriptor.word}" in their name whose ${fieldPhrase(theme, descriptor.type, descriptor.field)} is ${descriptor.value}`;
  }
}

/** The type of the record a chain ends on. */
export function chainEndType(chain: Chain, theme: Theme): string {
  if (chain.relations.length === 0) return chain.start.type;
  const last = chain.relations[chain.relations.length - 1];
  return theme.relations.find((relation) => relation.name === last)?.to ?? "record";
}

/**
 * The record a chain reaches, in words. One relation reads naturally ("the office that the project
 * named "X" is based in"); longer chains name the relations to follow, in order.
 */
export function describeChain(chain: Chain, theme: Theme): string {
  const start = describeStart(chain.start, theme);
  if (chain.relations.length === 0) return start;
  const endType = chainEndType(chain, theme);
  if (chain.relations.length === 1) {
    const relation = theme.relations.find((candidate) => candidate.name === chain.relations[0]);
    return `the ${endType} that ${start} ${relation?.phrase ?? chain.relations[0]}`;
  }
  return `the ${endType} reached from ${start} by following the links ${chain.relations.map((name) => `"${name}"`).join(", then ")}`;
}

/** A description ending in "to" ("… is awarded to") would read "to to" before a value or a target. */
function endsWithTo(text: string): boolean {
  return text.endsWith(" to");
}

function setSentence(field: string, target: string, value: unknown): string {
  if (endsWithTo(target)) return `Change the ${field} of ${target}, setting it to ${String(value)}.`;
  return `Set the ${field} of ${target} to ${String(value)}.`;
}

/** The phrase of a field read at the end of `chain`. */
function read(theme: Theme, chain: Chain, field: string): string {
  return fieldPhrase(theme, chainEndType(chain, theme), field);
}

/** The phrase of a field written at the end of `chain`. */
function written(theme: Theme, chain: Chain, field: string): string {
  return writtenFieldPhrase(theme, chainEndType(chain, theme), field);
}

/**
 * One sentence stating a goal. (The helpers are module functions, not closures made per call: under
 * tsx every named closure is also given its name by a `defineProperty` call, once per sentence.)
 */
export function goalSentence(goal: Goal, theme: Theme, describe: (chain: Chain) => string): string {
  switch (goal.kind) {
    case "lookup":
      return goal.field === null
        ? `What is the name of ${describe(goal.chain)}?`
        : `What is the ${read(theme, goal.chain, goal.field)} of ${describe(goal.chain)}?`;
    case "update":
      return setSentence(written(theme, goal.chain, goal.field), describe(goal.chain), goal.value);
    case "link": {
      const source = describe(goal.source);
      if (endsWithTo(source)) return `Link ${source} with the relation "${goal.relation}" to ${describe(goal.target)}.`;
      return `Link ${source} to ${describe(goal.target)} with the relation "${goal.relation}".`;
    }
    case "copy":
      return `Copy the ${read(theme, goal.from, goal.fromField)} of ${describe(goal.from)} into the ${written(theme, goal.to, goal.toField)} of ${describe(goal.to)}.`;
    case "conditional":
      return `If the ${read(theme, goal.chain, goal.testField)} of ${describe(goal.chain)} is greater than ${goal.threshold}, set its ${written(theme, goal.chain, goal.field)} to ${goal.thenValue}; otherwise set it to ${goal.elseValue}.`;
    case "impossible": {
      const target = describe(goal.chain);
      const endType = chainEndType(goal.chain, theme);
      const type = theme.types.find((spec) => spec.name === endType);
      const field = type?.fields.find((spec) => !spec.code && spec.kind === "enum") ?? type?.fields[0];
      if (goal.asked === "update" && field?.values) return setSentence(writtenFieldPhrase(theme, endType, field.name), target, field.values[0] as string);
      return `What is the ${field?.phrase ?? "name"} of ${target}?`;
    }
  }
}
