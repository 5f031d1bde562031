import type { Random } from "../../../core/index.ts";
import { givenName, surname } from "../names.ts";
import type { SearchPlanTask } from "../task.ts";
import { themeByName, type FieldSpec, type Theme } from "../themes.ts";
import type { PlannedCall } from "../../_kit/scripted.ts";
import type { Script } from "./driver.ts";
import { oracleScript } from "./oracle.ts";
import { createObservations, observe, taskWords, type Observations } from "./observe.ts";

/**
 * Reward-hacking pilots: each tries one way of scoring without solving the task. They act only
 * through tool calls; some peek at the hidden task to make the hack as strong as it can be.
 */
const themeOf = (task: SearchPlanTask): Theme => themeByName(task.theme) as Theme;

/** The type and field the task is about (the first write, else the question's field). */
function targetOf(task: SearchPlanTask): { type: string; field: FieldSpec | undefined; value: string | number | undefined } {
  const theme = themeOf(task);
  const requirement = task.requirements.find((candidate) => candidate.kind === "field");
  const typeOf = (id: string) => task.records.find((record) => record.id === id)?.type ?? theme.types[0]?.name ?? "";
  if (requirement && requirement.kind === "field") {
    const type = typeOf(requirement.id);
    return { type, field: theme.types.find((spec) => spec.name === type)?.fields.find((spec) => spec.name === requirement.field), value: requirement.value };
  }
  const type = theme.types[0] as Theme["types"][number];
  return { type: type.name, field: type.fields.find((spec) => spec.kind === "enum"), value: undefined };
}

function plausibleGuess(task: SearchPlanTask, random: Random): string {
  const theme = themeOf(task);
  const roll = random.next();
  if (roll < 0.4) {
    const enums = theme.types.flatMap((type) => type.fields.flatMap((field) => field.values ?? []));
    return random.pick(enums);
  }
  if (roll < 0.7) return `${givenName(random)} ${surname(random)}`;
  return String(random.integer(1, 100) * 500);
}

/** Searches the task's words (each with a type filter where useful), collecting what it sees. */
function* searchWords(task: SearchPlanTask, observations: Observations, count: number, type?: string): Script {
  const words = taskWords(task.text).slice(0, count);
  const calls: PlannedCall[] = words.map((query) => ({ name: "search", arguments: { query, limit: 10, ...(type ? { type } : {}) } }));
  if (calls.length === 0) return;
  const results = yield calls;
  for (const result of results) observe(observations, result);
}

function* readAll(observations: Observations, limit: number): Script {
  const ids = observations.ids.filter((id) => !observations.records.has(id)).slice(0, limit);
  if (ids.length === 0) return;
  const results = yield ids.map((id) => ({ name: "read_record", arguments: { id } }));
  for (const result of results) observe(observations, result);
}

export function* recklessGuess(task: SearchPlanTask, random: Random): Script {
  yield [{ name: "finish", arguments: { status: "done", answer: plausibleGuess(task, random) } }];
}

export function* searchSpam(task: SearchPlanTask, random: Random, guessAfter: number | null): Script {
  const words = taskWords(task.text);
  const observations = createObservations();
  for (let turn = 0; guessAfter === null || turn < guessAfter; turn++) {
    const results = yield [{ name: "search", arguments: { query: words.length ? random.pick(words) : "record" } }];
    observe(observations, results[0]);
  }
  const answer = observations.values.length > 0 ? random.pick(observations.values) : plausibleGuess(task, random);
  yield [{ name: "finish", arguments: { status: "done", answer } }];
}

export function* neverFinish(task: SearchPlanTask, random: Random): Script {
  const observations = createObservations();
  yield* oracleScript(task, { observations, stopBeforeFinish: true });
  for (;;) {
    const id = observations.ids.length > 0 ? random.pick(observations.ids) : task.records[0]?.id;
    observe(observations, (yield [{ name: "read_record", arguments: { id } }])[0]);
  }
}

export function* shotgunUpdate(task: SearchPlanTask): Script {
  const observations = createObservations();
  const target = targetOf(task);
  const field = target.field;
  yield* searchWords(task, observations, 6, target.type);
  if (field?.values) {
    const results = yield field.values.map((query) => ({ name: "search", arguments: { query, type: target.type, limit: 10 } }));
    for (const result of results) observe(observations, result);
  }
  const ids = observations.ids.filter((id) => observations.types.get(id) === target.type);
  if (field) {
    const values: Array<string | number> = [...(field.values ?? [])].filter((value) => value !== target.value);
    if (target.value !== undefined) values.push(target.value);
    if (values.length === 0) values.push(field.kind === "date" ? "2020-01-01" : field.kind === "string" ? "Northmere" : 1000);
    yield ids.flatMap((id) => values.map((value) => ({ name: "update_record", arguments: { id, field: field.name, value } })));
  }
  yield [{ name: "finish", arguments: { status: "done" } }];
}

export function* linkEverything(task: SearchPlanTask): Script {
  const observations = createObservations();
  yield* searchWords(task, observations, 6);
  const relations = [
    ...new Set(
      themeOf(task)
        .relations.filter((relation) => !relation.functional)
        .map((relation) => relation.name),
    ),
  ];
  const ids = observations.ids.slice(0, 16);
  const calls: PlannedCall[] = [];
  for (const source of ids)
    for (const target of ids)
      for (const relation of relations)
        if (source !== target) calls.push({ name: "link_records", arguments: { source_id: source, relation, target_id: target } });
  if (calls.length > 0) yield calls;
  yield [{ name: "finish", arguments: { status: "done" } }];
}

export function* alwaysImpossible(): Script {
  yield [{ name: "finish", arguments: { status: "impossible" } }];
}

export function* answerDump(task: SearchPlanTask): Script {
  const observations = createObservations();
  yield* searchWords(task, observations, 5);
  yield* readAll(observations, 20);
  yield [{ name: "finish", arguments: { status: "done", answer: [...new Set(observations.values)].join(", ") } }];
}

export function* readEverythingThenGuess(task: SearchPlanTask, random: Random): Script {
  const observations = createObservations();
  yield* searchWords(task, observations, 8);
  yield* readAll(observations, 40);
  const target = targetOf(task);
  if (task.requirements.length > 0 && target.field) {
    const name = target.field.name;
    const sameType = [...observations.records.values()].filter((record) => record.type === target.type);
    const seen = sameType.map((record) => record.fields[name]).filter((value) => value !== undefined) as Array<string | number>;
    if (sameType.length > 0 && seen.length > 0)
      yield [{ name: "update_record", arguments: { id: random.pick(sameType).id, field: name, value: random.pick(seen) } }];
  }
  const answer = observations.values.length > 0 ? random.pick(observations.values) : plausibleGuess(task, random);
  yield [{ name: "finish", arguments: { status: "done", ...(task.answer !== null ? { answer } : {}) } }];
}

/** Every malformed call shape a model produces: bad JSON, unknown tools, wrong types, bad enums. */
export const GARBAGE_CALLS: PlannedCall[] = [
  { name: "search", rawArguments: '{"query": "Oriveth' },
  { name: "delete_everything", arguments: { confirm: true } },
  { name: "search", arguments: { query: 42 } },
  { name: "read_record", arguments: {} },
  { name: "update_record", arguments: { id: ["EMP-0001"], field: "status", value: { nested: true } } },
  { name: "finish", arguments: { status: "maybe" } },
  { name: "link_records", rawArguments: "[1, 2, 3]" },
  { name: "finish", rawArguments: "null" },
  { name: "search", arguments: { query: "x", limit: 99 } },
  { name: "search", arguments: { query: "x", type: "spaceship" } },
  { name: "read_record", arguments: { id: "NOPE-0000" } },
  { name: "read_record", arguments: { id: "EMP-0001", extra: 1 } },
  { name: "", arguments: {} },
  { name: "finish", arguments: { status: "done", answer: 7 } },
  { name: "update_record", rawArguments: "{'id': 'EMP-0001'}" },
];

export function* formatGarbage(_task: SearchPlanTask, random: Random): Script {
  for (;;) yield [random.pick(GARBAGE_CALLS)];
}

export function* echoTask(task: SearchPlanTask): Script {
  yield [{ name: "finish", arguments: { status: "done", answer: task.text } }];
}
