import type { Random } from "../../core/index.ts";
import type { SearchPlanConfig } from "./config.ts";
import { placeName, surname } from "./names.ts";
import { nameKind, WorldNames } from "./naming.ts";
import { linksMaker, randomDate, recordMaker, type LinksMaker, type RecordMaker } from "./record-maker.ts";
import { clearTakenNumbers } from "./taken-numbers.ts";
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

interface TypePlan {
  spec: TypeSpec;
  makeRecord: RecordMaker;
  makeLinks: LinksMaker;
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

function planOf(theme: Theme): ThemePlan {
  let plan = themePlans.get(theme);
  if (plan) return plan;
  const indexOf = (name: string) => theme.types.findIndex((type) => type.name === name);
  const slots = theme.types.map(() => 0);
  const relations = theme.relations.map((spec): RelationPlan => {
    const from = indexOf(spec.from);
    return { spec, from, to: indexOf(spec.to), slot: spec.functional ? (slots[from] as number)++ : -1 };
  });
  // Functional links are made before any linkable one is drawn (a linkable link never duplicates one):
  // that is the order of the draws only when the theme lists its functional relations first.
  const firstLinkable = theme.relations.findIndex((relation) => !relation.functional);
  if (firstLinkable >= 0 && theme.relations.slice(firstLinkable).some((relation) => relation.functional))
    throw new RangeError(`theme '${theme.name}': functional relations must come before linkable ones`);
  const types = theme.types.map((spec): TypePlan => ({
    spec,
    makeRecord: recordMaker(spec, nameKind(spec.naming)),
    makeLinks: linksMaker(theme.relations.filter((relation) => relation.functional && relation.from === spec.name).map((relation) => relation.name)),
  }));
  plan = { types, people: theme.types.filter((type) => type.naming === "person"), relations, stride: Math.max(1, ...slots) };
  themePlans.set(theme, plan);
  return plan;
}

/** `World.functional` of the world built last (reused: a world is used up before the next is built). */
let functionalScratch = new Int32Array(1024);

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
  let cluster: World["cluster"] = null;
  const clusterIndices: number[] = [];
  if (config.nameClusterSize > 0 && plan.people.length > 0) {
    cluster = { type: random.pick(plan.people).name, word: surname(random), ids: [] };
  }
  /** Where each type's records start in `records` (they are made type by type). */
  const offsets: number[] = [0];
  for (let typeIndex = 0; typeIndex < types.length; typeIndex++) {
    const clusterSize = cluster && cluster.type === (types[typeIndex] as TypePlan).spec.name ? config.nameClusterSize : 0;
    offsets.push((offsets[typeIndex] as number) + Math.max(counts[typeIndex] as number, clusterSize + 2));
  }
  const names = new WorldNames(random, config.nearDuplicateRate, config.sharedWordRate, cluster ? cluster.word : null, offsets[types.length] as number);
  // Allocated at its size (growing it by pushes copied it several times per world); filled in order.
  const records: WorldRecord[] = new Array<WorldRecord>(offsets[types.length] as number);
  for (let typeIndex = 0; typeIndex < types.length; typeIndex++) {
    const typePlan = types[typeIndex] as TypePlan;
    names.beginType();
    const clusterSize = cluster && cluster.type === typePlan.spec.name ? config.nameClusterSize : 0;
    const start = offsets[typeIndex] as number;
    const end = offsets[typeIndex + 1] as number;
    const makeRecord = typePlan.makeRecord;
    for (let index = start; index < end; index++) {
      const inCluster = index - start < clusterSize;
      const record = makeRecord(random, places, names, inCluster);
      if (inCluster && cluster) {
        cluster.ids.push(record.id);
        clusterIndices.push(index);
      }
      records[index] = record;
    }
  }

  const stride = plan.stride;
  if (functionalScratch.length < records.length * stride) functionalScratch = new Int32Array(records.length * stride * 2);
  const functional = functionalScratch;
  let linked = false;
  for (const relation of plan.relations) {
    const sourceStart = offsets[relation.from] as number;
    const sourceCount = (offsets[relation.from + 1] as number) - sourceStart;
    const targetStart = offsets[relation.to] as number;
    const targetCount = (offsets[relation.to + 1] as number) - targetStart;
    if (relation.spec.functional) {
      for (let source = sourceStart; source < sourceStart + sourceCount; source++) {
        let target = targetStart + Math.floor(random.next() * targetCount);
        while (target === source) target = targetStart + Math.floor(random.next() * targetCount);
        functional[source * stride + relation.slot] = target;
      }
      continue;
    }
    if (!linked) linkFunctional(plan, records, offsets, functional);
    linked = true;
    const name = relation.spec.name;
    const linkCount = Math.floor(sourceCount / 3);
    for (let i = 0; i < linkCount; i++) {
      const source = records[sourceStart + Math.floor(random.next() * sourceCount)] as WorldRecord;
      const target = records[targetStart + Math.floor(random.next() * targetCount)] as WorldRecord;
      if (target === source || hasLink(source, name, target.id)) continue;
      source.links.push({ relation: name, target: target.id });
    }
  }
  if (!linked) linkFunctional(plan, records, offsets, functional);
  return { records, places, cluster, functional, stride, clusterIndices };
}

/** Gives every record its functional links (the targets drawn into `functional`), each type's records in one literal each. */
function linkFunctional(plan: ThemePlan, records: WorldRecord[], offsets: readonly number[], functional: Int32Array): void {
  const stride = plan.stride;
  for (let typeIndex = 0; typeIndex < plan.types.length; typeIndex++) {
    const makeLinks = (plan.types[typeIndex] as TypePlan).makeLinks;
    const end = offsets[typeIndex + 1] as number;
    for (let index = offsets[typeIndex] as number; index < end; index++) (records[index] as WorldRecord).links = makeLinks(records, functional, index * stride);
  }
}

function hasLink(source: WorldRecord, relation: string, target: string): boolean {
  for (const link of source.links) if (link.relation === relation && link.target === target) return true;
  return false;
}
