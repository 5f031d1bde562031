import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRandom, type Random } from "../../core/index.ts";
import { nameKind, WorldNames } from "./naming.ts";
import { recordMaker } from "./record-maker.ts";
import { clearTakenNumbers } from "./taken-numbers.ts";
import { THEMES, type TypeSpec } from "./themes.ts";
import { randomFieldValue, type FieldValue, type WorldRecord } from "./world.ts";

/**
 * The record of a type as the plain reading of the world rules makes it, drawing from `random` in the
 * same order: an id number 0-9999 not yet taken by the prefix, a name, then each field (codes 10000-99999
 * not yet taken by the code prefix, other kinds by `randomFieldValue`).
 */
function plainRecord(type: TypeSpec, random: Random, places: readonly string[], names: WorldNames, taken: Map<string, Set<number>>): WorldRecord {
  const draw = (group: string, low: number, high: number): number => {
    const used = taken.get(group) ?? new Set<number>();
    taken.set(group, used);
    let number: number;
    do number = random.integer(low, high);
    while (used.has(number));
    used.add(number);
    return number;
  };
  const id = `${type.prefix}-${String(draw(`id ${type.prefix}`, 0, 9999)).padStart(4, "0")}`;
  const name = names.make(nameKind(type.naming), false);
  const fields: Record<string, FieldValue> = {};
  for (const field of type.fields) {
    fields[field.name] = field.code ? `${field.code}-${draw(`code ${field.code}`, 10000, 99999)}` : randomFieldValue(field, random, places);
  }
  return { id, type: type.name, name, fields, links: [] };
}

describe("search_plan record makers", () => {
  it("make the records the plain rules make, from the same draws, for every type of every theme", () => {
    const places = ["Marrowfield", "Oakhaven", "Tessport"];
    for (const theme of THEMES) {
      for (const type of theme.types) {
        const make = recordMaker(type, nameKind(type.naming));
        // 300 records of one type: ids collide (birthday) and are drawn again, names repeat as near-duplicates.
        const compiledRandom = createRandom("record maker", theme.name, type.name);
        clearTakenNumbers();
        const compiledNames = new WorldNames(compiledRandom, 0.3, 0.3, null, 300);
        const compiled = Array.from({ length: 300 }, () => make(compiledRandom, places, compiledNames, false));

        const plainRandom = createRandom("record maker", theme.name, type.name);
        const plainNames = new WorldNames(plainRandom, 0.3, 0.3, null, 300);
        const taken = new Map<string, Set<number>>();
        const plain = Array.from({ length: 300 }, () => plainRecord(type, plainRandom, places, plainNames, taken));

        assert.deepEqual(
          compiled.map((record) => ({ ...record, links: [] })),
          plain,
          `${theme.name}/${type.name}`,
        );
        assert.equal(compiledRandom.next(), plainRandom.next(), `${theme.name}/${type.name}: both drew as many numbers`);
      }
    }
  });
});
