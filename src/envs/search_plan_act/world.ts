import type { Random } from "../../core/index.ts";
import type { SearchPlanConfig } from "./config.ts";
import { givenName, nearDuplicate, placeName, surname, wordName } from "./names.ts";
import type { FieldSpec, Theme, TypeSpec } from "./themes.ts";

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

/** "0192" for 192: ids are made for every record of every task. */
const FOUR_DIGITS = Array.from({ length: 10000 }, (_, number) => String(10000 + number).slice(1));

/**
 * The record-id numbers taken, per id prefix: a stamp per number ("EMP-0192" → 192), equal to the
 * current world's stamp when the world being built has used it, so no set of id strings is needed.
 */
const idStampsByPrefix = new Map<string, Uint8Array>();
let worldStamp = 0;

function idStamps(prefix: string): Uint8Array {
  let stamps = idStampsByPrefix.get(prefix);
  if (!stamps) idStampsByPrefix.set(prefix, (stamps = new Uint8Array(10000)));
  return stamps;
}

function nextWorldStamp(): number {
  if (worldStamp === 255) {
    for (const stamps of idStampsByPrefix.values()) stamps.fill(0);
    worldStamp = 0;
  }
  return ++worldStamp;
}

/** What naming a world's records needs to know (module-level helpers, not per-world closures). */
interface Naming {
  random: Random;
  config: SearchPlanConfig;
  usedNames: Set<string>;
  /** Surnames of the people named so far (thing names may reuse one). */
  surnames: string[];
  cluster: World["cluster"];
}

function freshName(naming: Naming, type: TypeSpec, inCluster: boolean): string {
  const { random, cluster, surnames } = naming;
  if (type.naming === "person") return `${givenName(random)} ${inCluster && cluster ? cluster.word : surname(random)}`;
  const word = surnames.length > 0 && random.chance(naming.config.sharedWordRate) ? random.pick(surnames) : wordName(random);
  return `${word} ${random.pick(type.naming)}`;
}

function makeName(naming: Naming, type: TypeSpec, sameType: WorldRecord[], inCluster: boolean): string {
  const { random, usedNames } = naming;
  if (!inCluster && sameType.length > 0 && random.chance(naming.config.nearDuplicateRate)) {
    const copy = nearDuplicate(random.pick(sameType).name, random);
    if (copy && !usedNames.has(copy)) return copy;
  }
  for (let attempt = 0; attempt < 20; attempt++) {
    const name = freshName(naming, type, inCluster);
    if (!usedNames.has(name)) return name;
  }
  const base = freshName(naming, type, inCluster);
  let suffix = 2;
  while (usedNames.has(`${base} ${suffix}`)) suffix++;
  return `${base} ${suffix}`;
}

/**
 * Builds one world: records of every type of the theme with typed fields, one link per functional
 * relation, a few linkable links, and the distractors the config asks for.
 */
export function generateWorld(theme: Theme, config: SearchPlanConfig, random: Random): World {
  const types = theme.types;
  const people = types.filter((type) => type.naming === "person");
  const places: string[] = [];
  for (let i = 0; i < 6; i++) places.push(placeName(random));
  const counts = types.map(() => 3);
  for (let extra = config.worldSize - 3 * types.length; extra > 0; extra--) counts[random.integer(0, types.length - 1)]++;

  const stamp = nextWorldStamp();
  // The numbers of the codes made so far, per code prefix ("PX-44712" → 44712).
  const usedCodeNumbers = new Map<string, number[]>();
  const byType = new Map<string, WorldRecord[]>();
  const records: WorldRecord[] = [];

  let cluster: World["cluster"] = null;
  if (config.nameClusterSize > 0 && people.length > 0) {
    cluster = { type: random.pick(people).name, word: surname(random), ids: [] };
  }
  const naming: Naming = { random, config, usedNames: new Set<string>(), surnames: [], cluster };

  for (let typeIndex = 0; typeIndex < types.length; typeIndex++) {
    const type = types[typeIndex] as TypeSpec;
    const list: WorldRecord[] = [];
    byType.set(type.name, list);
    let count = counts[typeIndex] as number;
    const clusterSize = cluster && cluster.type === type.name ? config.nameClusterSize : 0;
    count = Math.max(count, clusterSize + 2);
    const stamps = idStamps(type.prefix);
    const typeFields = type.fields;
    const usedCodes = typeFields.map((field) => {
      if (!field.code) return [];
      let used = usedCodeNumbers.get(field.code);
      if (!used) usedCodeNumbers.set(field.code, (used = []));
      return used;
    });
    const isPerson = type.naming === "person";
    for (let position = 0; position < count; position++) {
      let number: number;
      do number = random.integer(0, 9999);
      while (stamps[number] === stamp);
      stamps[number] = stamp;
      const id = `${type.prefix}-${FOUR_DIGITS[number]}`;
      const inCluster = position < clusterSize;
      const name = makeName(naming, type, list, inCluster);
      naming.usedNames.add(name);
      if (isPerson) naming.surnames.push(name.slice(name.lastIndexOf(" ") + 1));
      const fields: Record<string, FieldValue> = {};
      for (let fieldIndex = 0; fieldIndex < typeFields.length; fieldIndex++) {
        const field = typeFields[fieldIndex] as FieldSpec;
        if (field.code) {
          const used = usedCodes[fieldIndex] as number[];
          let code: number;
          do code = random.integer(10000, 99999);
          while (used.includes(code));
          used.push(code);
          fields[field.name] = `${field.code}-${code}`;
        } else {
          fields[field.name] = randomFieldValue(field, random, places);
        }
      }
      const record: WorldRecord = { id, type: type.name, name, fields, links: [] };
      if (inCluster && cluster) cluster.ids.push(id);
      list.push(record);
      records.push(record);
    }
  }

  for (const relation of theme.relations) {
    const sources = byType.get(relation.from) as WorldRecord[];
    const targets = byType.get(relation.to) as WorldRecord[];
    if (relation.functional) {
      for (const source of sources) {
        let target = random.pick(targets);
        while (target === source) target = random.pick(targets);
        source.links.push({ relation: relation.name, target: target.id });
      }
    } else {
      const linkCount = Math.floor(sources.length / 3);
      for (let i = 0; i < linkCount; i++) {
        const source = random.pick(sources);
        const target = random.pick(targets);
        if (target === source || source.links.some((link) => link.relation === relation.name && link.target === target.id)) continue;
        source.links.push({ relation: relation.name, target: target.id });
      }
    }
  }
  return { records, places, cluster };
}
