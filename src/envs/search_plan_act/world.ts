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

let fourDigitTable: string[] | null = null;

/** "0192" for 192 (a lookup table: ids are made on every record of every task). */
function fourDigits(value: number): string {
  fourDigitTable ??= Array.from({ length: 10000 }, (_, number) => String(10000 + number).slice(1));
  return fourDigitTable[value] as string;
}

export function randomDate(random: Random): string {
  return `${random.integer(2012, 2025)}-${TWO_DIGITS[random.integer(1, 12)]}-${TWO_DIGITS[random.integer(1, 28)]}`;
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
 * Builds one world: records of every type of the theme with typed fields, one link per functional
 * relation, a few linkable links, and the distractors the config asks for.
 */
export function generateWorld(theme: Theme, config: SearchPlanConfig, random: Random): World {
  const types = theme.types;
  const people = types.filter((type) => type.naming === "person");
  const places = Array.from({ length: 6 }, () => placeName(random));
  const counts = types.map(() => 3);
  for (let extra = config.worldSize - 3 * types.length; extra > 0; extra--) counts[random.integer(0, types.length - 1)]++;

  const usedIds = new Set<string>();
  const usedNames = new Set<string>();
  const usedCodes = new Set<string>();
  const surnames: string[] = [];
  const byType = new Map<string, WorldRecord[]>();
  const records: WorldRecord[] = [];

  let cluster: World["cluster"] = null;
  if (config.nameClusterSize > 0 && people.length > 0) {
    cluster = { type: random.pick(people).name, word: surname(random), ids: [] };
  }

  const freshName = (type: TypeSpec, inCluster: boolean): string => {
    if (type.naming === "person") return `${givenName(random)} ${inCluster && cluster ? cluster.word : surname(random)}`;
    const word = surnames.length > 0 && random.chance(config.sharedWordRate) ? random.pick(surnames) : wordName(random);
    return `${word} ${random.pick(type.naming)}`;
  };

  const makeName = (type: TypeSpec, sameType: WorldRecord[], inCluster: boolean): string => {
    if (!inCluster && sameType.length > 0 && random.chance(config.nearDuplicateRate)) {
      const copy = nearDuplicate(random.pick(sameType).name, random);
      if (copy && !usedNames.has(copy)) return copy;
    }
    for (let attempt = 0; attempt < 20; attempt++) {
      const name = freshName(type, inCluster);
      if (!usedNames.has(name)) return name;
    }
    const base = freshName(type, inCluster);
    let suffix = 2;
    while (usedNames.has(`${base} ${suffix}`)) suffix++;
    return `${base} ${suffix}`;
  };

  for (let typeIndex = 0; typeIndex < types.length; typeIndex++) {
    const type = types[typeIndex] as TypeSpec;
    const list: WorldRecord[] = [];
    byType.set(type.name, list);
    let count = counts[typeIndex] as number;
    const clusterSize = cluster && cluster.type === type.name ? config.nameClusterSize : 0;
    count = Math.max(count, clusterSize + 2);
    for (let position = 0; position < count; position++) {
      let id: string;
      do id = `${type.prefix}-${fourDigits(random.integer(0, 9999))}`;
      while (usedIds.has(id));
      usedIds.add(id);
      const inCluster = position < clusterSize;
      const name = makeName(type, list, inCluster);
      usedNames.add(name);
      if (type.naming === "person") surnames.push(name.slice(name.lastIndexOf(" ") + 1));
      const fields: Record<string, FieldValue> = {};
      for (const field of type.fields) {
        if (field.code) {
          let code: string;
          do code = `${field.code}-${random.integer(10000, 99999)}`;
          while (usedCodes.has(code));
          usedCodes.add(code);
          fields[field.name] = code;
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
