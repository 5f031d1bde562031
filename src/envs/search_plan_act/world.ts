import type { Random } from "../../core/index.ts";
import type { SearchPlanConfig } from "./config.ts";
import { placeName, surname } from "./names.ts";
import { nameKind, WorldNames, type NameKind } from "./naming.ts";
import { clearTakenNumbers, numberGroup, takeNumber } from "./taken-numbers.ts";
import type { FieldSpec, RelationSpec, Theme, TypeSpec } from "./themes.ts";

export type FieldValue = string | number;

export interface Link {
  relation: string;
  target: string;
}

export interface WorldRecord {
  id: string;
  type: string;
  name: string;
  fields: Record<string, FieldValue>;
  links: Link[];
}

export interface World {
  records: WorldRecord[];
  /** Place names the world's string fields draw from. */
  places: string[];
  /** Surname shared by a cluster of people (OOD attribute descriptors), or null. */
  cluster: { type: string; word: string; ids: string[] } | null;
  /**
   * The target of each functional link, as an index into `records`: record i's link over the j-th
   * functional relation leaving its type (in theme order; its links[j]) is at `i * stride + j`.
   * Shared scratch: valid until the next `generateWorld` call.
   */
  functional: Int32Array;
  stride: number;
  /** Indices into `records` of the cluster's members, in `cluster.ids` order. */
  clusterIndices: number[];
}

const TWO_DIGITS = Array.from({ length: 32 }, (_, value) => String(value).padStart(2, "0"));
const FIRST_YEAR = 2012;
const LAST_YEAR = 2025;

/** Every date `randomDate` can make ("2019-04-27"), filled on first use. */
const dateTable: Array<string | undefined> = new Array((LAST_YEAR - FIRST_YEAR + 1) * 12 * 28);

export function randomDate(random: Random): string {
  const year = random.integer(FIRST_YEAR, LAST_YEAR);
  const month = random.integer(1, 12);
  const day = random.integer(1, 28);
  const slot = (year - FIRST_YEAR) * 336 + (month - 1) * 28 + (day - 1);
  return (dateTable[slot] ??= `${year}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}`);
}

export function randomFieldValue(field: FieldSpec, random: Random, places: readonly string[]): FieldValue {
  switch (field.kind) {
    case "enum":
      return random.pick(field.values as readonly string[]);
    case "integer":
      return random.integer(field.min as number, field.max as number);
    case "money": {
      const step = (field.max as number) >= 100000 ? 100 : 5;
      return Math.round(random.integer(field.min as number, field.max as number) / step) * step;
    }
    case "date":
      return randomDate(random);
    case "string":
      return random.pick(places);
  }
}

/**
 * "00" to "99" and "000" to "999": the parts of id and code numbers ("EMP-" + "01" + "92", "PX-" + "44" +
 * "712"), cheaper than converting numbers to strings; small tables stay in cache.
 */
const HUNDRED = Array.from({ length: 100 }, (_, value) => String(value).padStart(2, "0"));
const THOUSAND = Array.from({ length: 1000 }, (_, value) => String(value).padStart(3, "0"));

const ENUM = 0;
const INTEGER = 1;
const MONEY = 2;
const DATE = 3;
const STRING = 4;
const CODE = 5;
const KINDS: Record<FieldSpec["kind"], number> = { enum: ENUM, integer: INTEGER, money: MONEY, date: DATE, string: STRING };

/** A field, ready to draw: what `randomFieldValue` reads, as numbers. */
interface FieldPlan {
  name: string;
  kind: number;
  low: number;
  high: number;
  step: number;
  values: readonly string[];
  /** CODE fields: the start of a code ("PX-") and its prefix's group of numbers taken (taken-numbers.ts). */
  codeStart: string;
  codeGroup: number;
}

interface TypePlan {
  spec: TypeSpec;
  /** "EMP-" */
  idStart: string;
  names: NameKind;
  /** The id prefix's group of numbers taken (taken-numbers.ts). */
  idGroup: number;
  fields: FieldPlan[];
  /** Makes the fields object of a record of this type from its values in field order. */
  makeFields: (values: readonly FieldValue[]) => Record<string, FieldValue>;
}

interface RelationPlan {
  spec: RelationSpec;
  from: number;
  to: number;
  /** For functional relations: the position among the functional relations leaving `from`. */
  slot: number;
}

/** A theme, computed once: its types and relations by index. */
interface ThemePlan {
  types: TypePlan[];
  people: TypeSpec[];
  relations: RelationPlan[];
  /** The most functional relations leaving one type. */
  stride: number;
}

const themePlans = new WeakMap<Theme, ThemePlan>();

function fieldPlan(field: FieldSpec): FieldPlan {
  const high = field.max ?? 0;
  return {
    name: field.name,
    kind: field.code ? CODE : KINDS[field.kind],
    low: field.min ?? 0,
    high,
    step: high >= 100000 ? 100 : 5,
    values: field.values ?? [],
    codeStart: `${field.code}-`,
    codeGroup: field.code ? numberGroup(`code ${field.code}`) : -1,
  };
}

/**
 * A function that returns `{name0: values[0], name1: values[1], …}` as one object literal: every record
 * of a type then shares one hidden class, which property-by-property stores with varying names (a
 * megamorphic path, taken for every field of every record) would not give. The names come from the
 * theme definitions and are quoted as JSON strings.
 */
function fieldsMaker(fields: readonly FieldSpec[]): TypePlan["makeFields"] {
  const properties = fields.map((field, index) => `${JSON.stringify(field.name)}: values[${index}]`);
  return new Function("values", `return { ${properties.join(", ")} };`) as TypePlan["makeFields"];
}

function planOf(theme: Theme): ThemePlan {
  let plan = themePlans.get(theme);
  if (plan) return plan;
  const types = theme.types.map((spec): TypePlan => ({
    spec,
    idStart: `${spec.prefix}-`,
    names: nameKind(spec.naming),
    idGroup: numberGroup(`id ${spec.prefix}`),
    fields: spec.fields.map(fieldPlan),
    makeFields: fieldsMaker(spec.fields),
  }));
  const indexOf = (name: string) => theme.types.findIndex((type) => type.name === name);
  const slots = theme.types.map(() => 0);
  const relations = theme.relations.map((spec): RelationPlan => {
    const from = indexOf(spec.from);
    return { spec, from, to: indexOf(spec.to), slot: spec.functional ? (slots[from] as number)++ : -1 };
  });
  for (const type of theme.types) while (fieldValues.length < type.fields.length) fieldValues.push("");
  plan = {
    types,
    people: theme.types.filter((type) => type.naming === "person"),
    relations,
    stride: Math.max(1, ...slots),
  };
  themePlans.set(theme, plan);
  return plan;
}

/** `World.functional` of the world built last (reused: a world is used up before the next is built). */
let functionalScratch = new Int32Array(1024);

/** The values of the record being made, in field order (scratch: `makeFields` copies the ones it names). */
const fieldValues: FieldValue[] = [];

function drawValue(field: FieldPlan, random: Random, places: readonly string[]): FieldValue {
  switch (field.kind) {
    case ENUM:
      return random.pick(field.values);
    case INTEGER:
      return random.integer(field.low, field.high);
    case MONEY:
      return Math.round(random.integer(field.low, field.high) / field.step) * field.step;
    case DATE:
      return randomDate(random);
    default:
      return random.pick(places);
  }
}

/**
 * Builds one world: records of every type of the theme with typed fields, one link per functional
 * relation, a few linkable links, and the distractors the config asks for.
 */
export function generateWorld(theme: Theme, config: SearchPlanConfig, random: Random): World {
  const plan = planOf(theme);
  const types = plan.types;
  const places: string[] = [];
  for (let i = 0; i < 6; i++) places.push(placeName(random));
  const counts = types.map(() => 3);
  for (let extra = config.worldSize - 3 * types.length; extra > 0; extra--) counts[random.integer(0, types.length - 1)]++;

  clearTakenNumbers();
  const records: WorldRecord[] = [];
  /** Where each type's records start in `records` (they are made type by type). */
  const offsets: number[] = [];

  let cluster: World["cluster"] = null;
  const clusterIndices: number[] = [];
  if (config.nameClusterSize > 0 && plan.people.length > 0) {
    cluster = { type: random.pick(plan.people).name, word: surname(random), ids: [] };
  }
  const names = new WorldNames(random, config.nearDuplicateRate, config.sharedWordRate, cluster ? cluster.word : null);

  for (let typeIndex = 0; typeIndex < types.length; typeIndex++) {
    const typePlan = types[typeIndex] as TypePlan;
    const type = typePlan.spec;
    names.beginType();
    offsets.push(records.length);
    let count = counts[typeIndex] as number;
    const clusterSize = cluster && cluster.type === type.name ? config.nameClusterSize : 0;
    count = Math.max(count, clusterSize + 2);
    const idGroup = typePlan.idGroup;
    const fieldPlans = typePlan.fields;
    for (let position = 0; position < count; position++) {
      let number: number;
      do number = random.integer(0, 9999);
      while (!takeNumber(idGroup, number));
      const id = typePlan.idStart + HUNDRED[Math.floor(number / 100)] + HUNDRED[number % 100];
      const inCluster = position < clusterSize;
      const name = names.make(typePlan.names, inCluster);
      for (let fieldIndex = 0; fieldIndex < fieldPlans.length; fieldIndex++) {
        const field = fieldPlans[fieldIndex] as FieldPlan;
        if (field.kind === CODE) {
          let code: number;
          do code = random.integer(10000, 99999);
          while (!takeNumber(field.codeGroup, code));
          // Codes run from 10000 to 99999: two digits, then three.
          fieldValues[fieldIndex] = field.codeStart + HUNDRED[Math.floor(code / 1000)] + THOUSAND[code % 1000];
        } else {
          fieldValues[fieldIndex] = drawValue(field, random, places);
        }
      }
      const fields = typePlan.makeFields(fieldValues);
      const record: WorldRecord = { id, type: type.name, name, fields, links: [] };
      if (inCluster && cluster) {
        cluster.ids.push(id);
        clusterIndices.push(records.length);
      }
      records.push(record);
    }
  }
  offsets.push(records.length);

  const stride = plan.stride;
  if (functionalScratch.length < records.length * stride) functionalScratch = new Int32Array(records.length * stride * 2);
  const functional = functionalScratch;
  for (const relation of plan.relations) {
    const sourceStart = offsets[relation.from] as number;
    const sourceCount = (offsets[relation.from + 1] as number) - sourceStart;
    const targetStart = offsets[relation.to] as number;
    const targetCount = (offsets[relation.to + 1] as number) - targetStart;
    const name = relation.spec.name;
    if (relation.spec.functional) {
      for (let source = sourceStart; source < sourceStart + sourceCount; source++) {
        let target = targetStart + Math.floor(random.next() * targetCount);
        while (target === source) target = targetStart + Math.floor(random.next() * targetCount);
        const targetRecord = records[target] as WorldRecord;
        (records[source] as WorldRecord).links.push({ relation: name, target: targetRecord.id });
        functional[source * stride + relation.slot] = target;
      }
    } else {
      const linkCount = Math.floor(sourceCount / 3);
      for (let i = 0; i < linkCount; i++) {
        const source = records[sourceStart + Math.floor(random.next() * sourceCount)] as WorldRecord;
        const target = records[targetStart + Math.floor(random.next() * targetCount)] as WorldRecord;
        if (target === source || hasLink(source, name, target.id)) continue;
        source.links.push({ relation: name, target: target.id });
      }
    }
  }
  return { records, places, cluster, functional, stride, clusterIndices };
}

function hasLink(source: WorldRecord, relation: string, target: string): boolean {
  for (const link of source.links) if (link.relation === relation && link.target === target) return true;
  return false;
}
