/**
 * A lower bound on building a search_plan world in this runtime: per record, only the strings any record
 * format must hold (an id and a two-word name, each made by joining table entries, as the generator does)
 * and the draws of its five field values and one link, stored in typed arrays. No uniqueness checks, no
 * codes, no look-alike names, no objects: strictly less than a real record needs, so a world cannot be
 * built faster than this, whatever its format. bench/envs.ts turns it into a ceiling on tasks per
 * CPU-second at a world size.
 *
 * `objectFloorWorld` is the same floor in the record format tasks have ({id, type, name, fields, links}
 * objects): the same strings and draws, one object per record, its fields (five values) and one link.
 * Still no uniqueness, codes or look-alikes: a lower bound for any generator that returns record objects.
 */
import type { Random } from "../src/core/index.ts";
import * as names from "../src/envs/search_plan_act/names.ts";

// Local copies: under tsx an imported binding is read through a getter on every use.
const SYLLABLES = names.SYLLABLES.slice();
const CAPITALISED = names.CAPITALISED.slice();
const HUNDRED = Array.from({ length: 100 }, (_, value) => String(value).padStart(2, "0"));
const ID_HEADS = HUNDRED.map((digits) => `EMP-${digits}`);

let ids: string[] = [];
let recordNames: string[] = [];
let values = new Float64Array(0);
let links = new Int32Array(0);

/** Makes the floor's share of a `size`-record world; returns the number of records (what it did). */
export function floorWorld(random: Random, size: number): number {
  if (ids.length !== size) {
    ids = new Array<string>(size);
    recordNames = new Array<string>(size);
    values = new Float64Array(size * 5);
    links = new Int32Array(size);
  }
  const syllables = SYLLABLES.length;
  const capitals = CAPITALISED.length;
  for (let index = 0; index < size; index++) {
    const number = Math.floor(random.next() * 10000);
    ids[index] = (ID_HEADS[Math.floor(number / 100)] as string) + HUNDRED[number % 100];
    recordNames[index] =
      (CAPITALISED[Math.floor(random.next() * capitals)] as string) +
      SYLLABLES[Math.floor(random.next() * syllables)] +
      " " +
      CAPITALISED[Math.floor(random.next() * capitals)];
    for (let field = 0; field < 5; field++) values[index * 5 + field] = random.next();
    links[index] = Math.floor(random.next() * size);
  }
  return size;
}

const ENUM_VALUES = ["active", "on_hold", "closed", "planned"];
/** Shared until the record gets its link (as the generator does): no empty array per record. */
const NO_LINKS: FloorRecord["links"] = [];

interface FloorRecord {
  id: string;
  type: string;
  name: string;
  fields: { status: string; level: number; budget: number; grade: string; size: number };
  links: Array<{ relation: string; target: string }>;
}

/** The object floor of a `size`-record world (the draws of `floorWorld`, stored as record objects); returns the records. */
export function objectFloorWorld(random: Random, size: number): FloorRecord[] {
  const records = new Array<FloorRecord>(size);
  const syllables = SYLLABLES.length;
  const capitals = CAPITALISED.length;
  for (let index = 0; index < size; index++) {
    const number = Math.floor(random.next() * 10000);
    const id = (ID_HEADS[Math.floor(number / 100)] as string) + HUNDRED[number % 100];
    const name =
      (CAPITALISED[Math.floor(random.next() * capitals)] as string) +
      SYLLABLES[Math.floor(random.next() * syllables)] +
      " " +
      CAPITALISED[Math.floor(random.next() * capitals)];
    const fields = {
      status: ENUM_VALUES[Math.floor(random.next() * 4)] as string,
      level: Math.floor(random.next() * 100),
      budget: Math.floor(random.next() * 100000),
      grade: ENUM_VALUES[Math.floor(random.next() * 4)] as string,
      size: Math.floor(random.next() * 1000),
    };
    records[index] = { id, type: "employee", name, fields, links: NO_LINKS };
  }
  for (let index = 0; index < size; index++) {
    (records[index] as FloorRecord).links = [{ relation: "works_at", target: (records[Math.floor(random.next() * size)] as FloorRecord).id }];
  }
  return records;
}
