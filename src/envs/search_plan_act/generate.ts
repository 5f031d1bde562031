import { EnvConfigError, createRandom, type Random } from "../../core/index.ts";
import { FAMILIES, type Family, type SearchPlanConfig } from "./config.ts";
import { nearDuplicate } from "./names.ts";
import { describeChain, goalSentence } from "./phrasing.ts";
import { requirementsOf, touchedFields } from "./goal-fields.ts";
import { normalizeValue, type Chain, type Descriptor, type Goal, type SearchPlanTask } from "./task.ts";
import { IN_DISTRIBUTION_THEMES, OOD_THEMES, themeByName, type FieldSpec, type RelationSpec, type Theme } from "./themes.ts";
import { NO_TABLES, tablesOf, type ThemeTables, type TypeTables } from "./theme-tables.ts";
import { generateWorld, randomFieldValue, type World, type WorldRecord } from "./world.ts";

interface Context {
  theme: Theme;
  config: SearchPlanConfig;
  random: Random;
  world: World;
  /** Probability that a chain starts from a member of the surname cluster. */
  clusterStart: number;
  /** The theme's tables (theme-tables.ts). */
  tables: ThemeTables;
  /** The first and last records of the chain `buildChain` returned last. */
  start: WorldRecord;
  end: WorldRecord;
}

function typeTables(context: Context, type: string): TypeTables {
  const names = context.tables.typeNames;
  for (let index = 0; index < names.length; index++) if (names[index] === type) return context.tables.typeList[index] as TypeTables;
  return NO_TABLES;
}

function describeStart(context: Context, index: number, avoidField: string | null): Descriptor {
  const { world, random } = context;
  const record = world.records[index] as WorldRecord;
  const cluster = world.cluster;
  const tables = typeTables(context, record.type);
  if (cluster && world.clusterIndices.includes(index)) {
    const candidates: FieldSpec[] = [];
    for (const field of tables.fields) {
      if (field.kind !== "date" || field.name === avoidField) continue;
      const value = record.fields[field.name];
      let same = 0;
      for (const member of world.clusterIndices) if ((world.records[member] as WorldRecord).fields[field.name] === value) same++;
      if (same === 1) candidates.push(field);
    }
    if (candidates.length > 0) {
      const field = random.pick(candidates).name;
      return { by: "attribute", type: record.type, id: record.id, word: cluster.word, field, value: record.fields[field] as string };
    }
  }
  const codeField = tables.codeField;
  if (codeField && codeField.name !== avoidField && random.chance(0.3)) {
    return { by: "code", type: record.type, id: record.id, field: codeField.name, code: record.fields[codeField.name] as string };
  }
  return { by: "name", type: record.type, id: record.id, name: record.name };
}

/**
 * The walk `buildChain` is trying: relation names, and the records visited as indices into the world's
 * records (one more than relations; a record's id is unique, so its index stands for it). Numbers, not
 * the ids: a young string stored into a long-lived array takes the write barrier's slow path.
 */
const chainRelations: string[] = [];
let chainRecords = new Int32Array(8);

/** Whether record `index` is among the walk's first `steps + 1` records. */
function visited(index: number, steps: number): boolean {
  for (let position = 0; position <= steps; position++) if (chainRecords[position] === index) return true;
  return false;
}

function chainIdsOf(records: readonly WorldRecord[], steps: number): string[] {
  const ids: string[] = [];
  for (let position = 0; position <= steps; position++) ids.push((records[chainRecords[position] as number] as WorldRecord).id);
  return ids;
}

/**
 * A random walk of `length` functional relations over distinct records, ending on an accepted type.
 * Leaves the chain's first and last records in `context.start` and `context.end`.
 */
function buildChain(context: Context, length: number, accept: (record: WorldRecord) => boolean): Chain | null {
  const { random, world } = context;
  const { cluster, records, functional, stride } = world;
  for (let attempt = 0; attempt < 30; attempt++) {
    const useCluster = cluster !== null && random.chance(context.clusterStart);
    const first = useCluster ? random.pick(world.clusterIndices) : Math.floor(random.next() * records.length);
    let index = first;
    let current = records[index] as WorldRecord;
    // The walk is kept in scratch lists and copied out only when it is accepted (most attempts are not).
    if (chainRecords.length <= length) chainRecords = new Int32Array(length + 1);
    chainRecords[0] = first;
    let steps = 0;
    let ok = true;
    for (let step = 0; step < length && ok; step++) {
      const tables = typeTables(context, current.type);
      const options = tables.functionalFrom;
      if (options.length === 0) throw new RangeError("pick from an empty list");
      const option = Math.floor(random.next() * options.length);
      const nextIndex = functional[index * stride + (tables.linkSlots[option] as number)] as number;
      const next = records[nextIndex] as WorldRecord;
      if (visited(nextIndex, steps)) ok = false;
      else {
        chainRelations[steps] = (options[option] as RelationSpec).name;
        chainRecords[++steps] = nextIndex;
        current = next;
        index = nextIndex;
      }
    }
    if (!ok || !accept(current)) continue;
    const start = describeStart(context, first, null);
    context.start = records[first] as WorldRecord;
    context.end = current;
    return { start, relations: chainRelations.slice(0, steps), ids: chainIdsOf(records, steps) };
  }
  return null;
}

function differentValue(context: Context, field: FieldSpec, current: unknown): string | number {
  if (field.kind === "enum") return context.random.pick((field.values as readonly string[]).filter((value) => value !== current));
  for (let attempt = 0; attempt < 10; attempt++) {
    const value = randomFieldValue(field, context.random, context.world.places);
    if (value !== current) return value;
  }
  return field.kind === "string" ? `${String(current)}ville` : typeof current === "number" ? current + 1 : "2030-01-01";
}

function lookupGoal(context: Context, hops: number): Goal | null {
  const chain = buildChain(context, hops - 1, () => true);
  if (!chain) return null;
  const end = context.end;
  const avoid = chain.start.by === "code" || chain.start.by === "attribute" ? chain.start.field : null;
  const readable = typeTables(context, end.type).readable;
  const fields = hops > 1 || avoid === null ? readable : readable.filter((field) => field.name !== avoid);
  if (hops > 1 && context.random.chance(0.3)) return { kind: "lookup", chain, field: null, answer: end.name };
  const field = context.random.pick(fields);
  return { kind: "lookup", chain, field: field.name, answer: String(end.fields[field.name]) };
}

function updateGoal(context: Context, length: number): Goal | null {
  const chain = buildChain(context, length, () => true);
  if (!chain) return null;
  const end = context.end;
  const field = context.random.pick(typeTables(context, end.type).writable);
  return { kind: "update", chain, field: field.name, value: differentValue(context, field, end.fields[field.name]) };
}

function linkGoal(context: Context, length: number): Goal | null {
  const relation = context.random.pick(context.tables.linkable);
  const source = buildChain(context, length, (record) => record.type === relation.from);
  const from = context.end;
  const target = buildChain(context, context.random.integer(0, length), (record) => record.type === relation.to);
  const to = context.end;
  if (!source || !target) return null;
  if (from === to || from.links.some((link) => link.relation === relation.name && link.target === to.id)) return null;
  return { kind: "link", source, relation: relation.name, target };
}

/** Scratch list of the copy pairs whose values differ (reused: a copy goal picks one and keeps no reference). */
const differing: Array<[FieldSpec, FieldSpec]> = [];

function copyGoal(context: Context, length: number): Goal | null {
  const from = buildChain(context, length, () => true);
  const source = context.end;
  const to = buildChain(context, context.random.integer(0, length), () => true);
  const target = context.end;
  if (!from || !to) return null;
  if (source === target) return null;
  differing.length = 0;
  for (const pair of typeTables(context, source.type).copyPairs.get(target.type) ?? []) {
    if (source.fields[pair[0].name] !== target.fields[pair[1].name]) differing.push(pair);
  }
  if (differing.length === 0) return null;
  const [fromField, toField] = context.random.pick(differing);
  return { kind: "copy", from, fromField: fromField.name, to, toField: toField.name, value: source.fields[fromField.name] as string | number };
}

function suitsConditional(context: Context, record: WorldRecord): boolean {
  const tables = typeTables(context, record.type);
  return tables.numeric.length > 0 && tables.writableEnums.length > 0;
}

function conditionalGoal(context: Context, length: number): Goal | null {
  const chain = buildChain(context, length, (record) => suitsConditional(context, record));
  if (!chain) return null;
  const end = context.end;
  const tables = typeTables(context, end.type);
  const test = context.random.pick(tables.numeric);
  const target = context.random.pick(tables.writableEnums);
  const observed = end.fields[test.name] as number;
  const span = Math.max(1, Math.round(((test.max as number) - (test.min as number)) / 10));
  const greater = context.random.chance(0.5);
  const threshold = greater ? observed - context.random.integer(1, span) : observed + context.random.integer(0, span);
  const values = target.values as readonly string[];
  const correct = context.random.pick(values.filter((value) => value !== end.fields[target.name]));
  const other = context.random.pick(values.filter((value) => value !== correct));
  const [thenValue, elseValue] = greater ? [correct, other] : [other, correct];
  return { kind: "conditional", chain, testField: test.name, threshold, field: target.name, thenValue, elseValue, value: correct };
}

function hasName(records: readonly WorldRecord[], name: string): boolean {
  const lower = name.toLowerCase();
  // Names are built from ASCII parts, whose lowercase has the same length: a name of another length
  // cannot match, and lowercasing it (a new string per record) is skipped.
  for (const record of records) if (record.name.length === lower.length && record.name.toLowerCase() === lower) return true;
  return false;
}

function impossibleGoal(context: Context, length: number): Goal | null {
  const { random } = context;
  if (random.chance(0.5)) {
    const base = buildChain(context, length, () => true);
    if (!base) return null;
    const startRecord = context.start;
    const name = nearDuplicate(startRecord.name, random);
    if (!name || hasName(context.world.records, name)) return null;
    const chain: Chain = { start: { by: "missing", type: startRecord.type, name }, relations: base.relations, ids: [] };
    return { kind: "impossible", chain, reason: `no ${startRecord.type} is named "${name}"`, asked: random.chance(0.5) ? "lookup" : "update" };
  }
  const relation = random.pick(context.tables.linkable);
  const base = buildChain(
    context,
    Math.max(0, length - 1),
    (record) => record.type === relation.from && !record.links.some((link) => link.relation === relation.name),
  );
  if (!base) return null;
  const chain: Chain = { start: base.start, relations: [...base.relations, relation.name], ids: base.ids };
  return {
    kind: "impossible",
    chain,
    reason: `${base.ids[base.ids.length - 1]} has no "${relation.name}" link`,
    asked: random.chance(0.5) ? "lookup" : "update",
  };
}

function pickFamily(context: Context): Family {
  if (context.random.chance(context.config.impossibleRate)) return "impossible";
  const weights = context.config.familyWeights;
  const total = FAMILIES.reduce((sum, family) => sum + weights[family], 0);
  let roll = context.random.next() * total;
  for (const family of FAMILIES) {
    roll -= weights[family];
    if (roll < 0 && weights[family] > 0) return family;
  }
  return FAMILIES.find((family) => weights[family] > 0) as Family;
}

function mutationLength(context: Context): number {
  const low = Math.max(0, context.config.minHops - 1);
  return context.random.integer(low, Math.max(low, context.config.maxHops - 2));
}

function singleGoal(context: Context, kind: Family): Goal | null {
  const { random, config } = context;
  switch (kind) {
    case "lookup":
      return lookupGoal(context, random.integer(config.minHops, config.maxHops));
    case "update":
      return updateGoal(context, mutationLength(context));
    case "link":
      return linkGoal(context, mutationLength(context));
    case "copy":
      return copyGoal(context, mutationLength(context));
    case "conditional":
      return conditionalGoal(context, mutationLength(context));
    case "impossible":
      return impossibleGoal(context, mutationLength(context));
    default:
      return null;
  }
}

const COMPOSITE_PARTS = ["update", "link", "copy", "conditional"] as const;

function makeGoals(context: Context, family: Family): Goal[] | null {
  const { random } = context;
  if (family !== "composite") {
    const goal = singleGoal(context, family);
    return goal ? [goal] : null;
  }
  const goals: Goal[] = [];
  const reads = new Set<string>();
  const writes = new Set<string>();
  const parts = random.integer(2, 3);
  for (let attempt = 0; attempt < 12 && goals.length < parts; attempt++) {
    const goal = singleGoal(context, random.pick(COMPOSITE_PARTS));
    if (!goal) continue;
    const touched = touchedFields(goal);
    if (touched.writes.some((key) => reads.has(key) || writes.has(key)) || touched.reads.some((key) => writes.has(key))) continue;
    touched.reads.forEach((key) => reads.add(key));
    touched.writes.forEach((key) => writes.add(key));
    goals.push(goal);
  }
  return goals.length >= 2 ? goals : null;
}

export interface GenerateOptions {
  envId: string;
  split: string;
  seed: number;
  index: number;
  config: SearchPlanConfig;
  /** Themes allowed in this split. */
  allowedThemes: readonly string[];
}

/** Theme lists already checked, with the allowed list they were checked against (configs repeat across tasks). */
const validatedThemes = new WeakMap<readonly string[], readonly string[]>();

function validateThemes(envId: string, split: string, themes: readonly string[], allowedThemes: readonly string[]): void {
  for (const name of themes) {
    if (!themeByName(name))
      throw new EnvConfigError({
        message: `${envId}: config key 'themes': unknown theme '${name}'; themes: ${[...IN_DISTRIBUTION_THEMES, ...OOD_THEMES].join(", ")}`,
      });
    if (!allowedThemes.includes(name))
      throw new EnvConfigError({
        message: `${envId}: config key 'themes': theme '${name}' is not available in split '${split}' (allowed: ${allowedThemes.join(", ")})`,
      });
  }
}

/** Generates one task: a world, a goal and its hidden plan. Pure function of its arguments. */
export function generateTask(options: GenerateOptions): SearchPlanTask {
  const { envId, split, seed, index, config } = options;
  const themes = config.themes ?? options.allowedThemes;
  if (validatedThemes.get(themes) !== options.allowedThemes) {
    validateThemes(envId, split, themes, options.allowedThemes);
    validatedThemes.set(themes, options.allowedThemes);
  }
  const random = createRandom(envId, split, seed, index);
  const theme = themeByName(random.pick(themes)) as Theme;
  const world = generateWorld(theme, config, random.fork("world"));
  return taskOfWorld(options, theme, world, random.fork("task"));
}

/**
 * The goal step of `generateTask`: goals, text and requirements over a world built for `theme`, drawn
 * from `random` (the task stream's "task" fork). Exported so bench/envs.ts can time it apart from the world.
 */
export function taskOfWorld(options: GenerateOptions, theme: Theme, world: World, random: Random): SearchPlanTask {
  const { envId, split, seed, index, config } = options;
  const first = world.records[0] as WorldRecord;
  const context: Context = {
    theme,
    config,
    random,
    world,
    clusterStart: world.cluster ? 0.5 : 0,
    tables: tablesOf(theme),
    start: first,
    end: first,
  };
  let family = pickFamily(context);
  let goals = makeGoals(context, family);
  for (let attempt = 0; !goals && attempt < 8; attempt++) goals = makeGoals(context, family);
  if (!goals) {
    family = "lookup";
    for (let attempt = 0; !goals; attempt++)
      goals = makeGoals(context, family) ?? (attempt > 50 ? [lookupGoal({ ...context, config: { ...config, minHops: 1, maxHops: 1 } }, 1) as Goal] : null);
  }
  const sentences = goals.map((goal) => goalSentence(goal, theme, (chain) => describeChain(chain, theme)));
  const text =
    goals.length === 1
      ? (sentences[0] as string)
      : `Do the following, in order: ${sentences.map((sentence, position) => `(${position + 1}) ${sentence}`).join(" ")}`;
  const lookup = goals.find((goal) => goal.kind === "lookup");
  const statedValues = new Set<string>();
  for (const goal of goals) {
    if (goal.kind === "update") statedValues.add(normalizeValue(goal.value));
    if (goal.kind === "conditional") [goal.thenValue, goal.elseValue].forEach((value) => statedValues.add(normalizeValue(value)));
  }
  let hops = -Infinity;
  for (const goal of goals) {
    if ("chain" in goal) hops = Math.max(hops, goal.chain.relations.length + 1);
    else if (goal.kind === "link") hops = Math.max(hops, goal.source.relations.length + 1, goal.target.relations.length + 1);
    else if (goal.kind === "copy") hops = Math.max(hops, goal.from.relations.length + 1, goal.to.relations.length + 1);
  }
  return {
    env: envId,
    split,
    seed,
    index,
    theme: theme.name,
    family: goals.some((goal) => goal.kind === "impossible") ? "impossible" : family,
    text,
    records: world.records,
    goals,
    status: goals.some((goal) => goal.kind === "impossible") ? "impossible" : "done",
    answer: lookup && lookup.kind === "lookup" ? lookup.answer : null,
    requirements: requirementsOf(goals),
    statedValues: [...statedValues].sort(),
    hops,
    slack: config.slack,
    ...(config.reward !== "standard" ? { rewardVariant: config.reward } : {}),
  };
}
