import type { Random } from "../../core/index.ts";
import type { NameKind, WorldNames } from "./naming.ts";
import * as takenNumbers from "./taken-numbers.ts";
import type { FieldSpec, TypeSpec } from "./themes.ts";
import type { Link, WorldRecord } from "./world.ts";

/**
 * Per type of a theme, two functions compiled once from the theme data: one that makes a record
 * (draws its id, name and field values, in that order, and returns it as one object literal) and one
 * that makes a record's functional links as one array literal.
 *
 * Why compiled: a world is 160 records of ~5 fields, and a generic loop over field specs (a switch per
 * field, values gathered in a scratch array, then copied into the record) was a large share of building
 * one. A literal per type gives every record of the type one hidden class, the draws are inlined and the
 * arrays are allocated at their exact size (a `[]` that is pushed to grows a 17-slot backing store).
 *
 * The random draws are exactly those `Random.integer` and `Random.pick` make (`low + floor(next() *
 * (high - low + 1))`, `items[floor(next() * length)]`), written out with the constants of the field.
 */
export type RecordMaker = (random: Random, places: readonly string[], names: WorldNames, inCluster: boolean) => WorldRecord;
/** The record's functional links, in theme order; `at` is its row in `functional` (record index * stride). */
export type LinksMaker = (records: readonly WorldRecord[], functional: Int32Array, at: number) => Link[];

// Under tsx every use of an imported binding is a getter call: the one used for every id and code, read once.
const takeNumber = takenNumbers.takeNumber;
const numberGroup = takenNumbers.numberGroup;

const TWO_DIGITS = Array.from({ length: 32 }, (_, value) => String(value).padStart(2, "0"));
const FIRST_YEAR = 2012;
const LAST_YEAR = 2025;

const YEARS = LAST_YEAR - FIRST_YEAR + 1;

/**
 * Every date `randomDate` can make ("2019-04-27"), by (year - FIRST_YEAR) * 336 + (month - 1) * 28 +
 * (day - 1): made once, when it is first needed (4,704 strings), so a date is three draws and one read.
 */
let dateTable: readonly string[] | null = null;

function dates(): readonly string[] {
  if (dateTable) return dateTable;
  const table: string[] = [];
  for (let year = FIRST_YEAR; year <= LAST_YEAR; year++)
    for (let month = 1; month <= 12; month++) for (let day = 1; day <= 28; day++) table.push(`${year}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}`);
  return (dateTable = table);
}

export function randomDate(random: Random): string {
  const year = random.integer(0, YEARS - 1);
  const month = random.integer(0, 11);
  const day = random.integer(0, 27);
  return dates()[year * 336 + month * 28 + day] as string;
}

/**
 * "00" to "99" and "000" to "999": the parts of id and code numbers ("EMP-" + "01" + "92", "PX-" + "44" +
 * "712"); small tables stay in cache.
 */
const HUNDRED = Array.from({ length: 100 }, (_, value) => String(value).padStart(2, "0"));
const THOUSAND = Array.from({ length: 1000 }, (_, value) => String(value).padStart(3, "0"));

/** `start` followed by each of "00" to "99" ("EMP-00", …): an id or code is then one join, not two. */
const heads = (start: string): readonly string[] => HUNDRED.map((digits) => start + digits);

/** A code unique in its group: 10000 to 99999, drawn again while taken; "PX-44712" from the heads of "PX-". */
function drawCode(random: Random, group: number, codeHeads: readonly string[]): string {
  let code: number;
  do code = 10000 + Math.floor(random.next() * 90000);
  while (!takeNumber(group, code));
  return (codeHeads[Math.floor(code / 1000)] as string) + THOUSAND[code % 1000];
}

/** The id of a new record: 0000 to 9999, drawn again while taken in the prefix's group. */
function drawId(random: Random, group: number, idHeads: readonly string[]): string {
  let number: number;
  do number = Math.floor(random.next() * 10000);
  while (!takeNumber(group, number));
  return (idHeads[Math.floor(number / 100)] as string) + HUNDRED[number % 100];
}

/** What a record holds until `generateWorld` gives it its own links (never seen outside it). */
const NO_LINKS: Link[] = [];

/**
 * The next `count` numbers of `random`, into `into`. A record's fixed draws are taken here, in one loop,
 * and read back by its field expressions: written out one call per draw, the calls went past what V8
 * inlines into one function, and each call not inlined returned its number boxed (an allocation).
 */
function draws(random: Random, into: Float64Array, count: number): void {
  for (let index = 0; index < count; index++) into[index] = random.next();
}

/**
 * The expression of a value of `field` (not a code) from the draws `draw()` names, in order; tables it
 * needs are pushed to `constants` (named C0, C1, …).
 */
function valueExpression(field: FieldSpec, constants: unknown[], draw: () => string): string {
  const constant = (value: unknown): string => `C${constants.push(value) - 1}`;
  const low = field.min ?? 0;
  const span = (field.max ?? 0) - low + 1;
  switch (field.kind) {
    case "enum": {
      const values = field.values ?? [];
      if (values.length === 0) throw new RangeError(`field '${field.name}': an enum needs values`);
      return `${constant(values)}[Math.floor(${draw()} * ${values.length})]`;
    }
    case "integer":
      return `${low} + Math.floor(${draw()} * ${span})`;
    case "money": {
      const step = (field.max ?? 0) >= 100000 ? 100 : 5;
      return `Math.round((${low} + Math.floor(${draw()} * ${span})) / ${step}) * ${step}`;
    }
    case "date": {
      // The draws of `randomDate` (year, month, day), as a slot of its table; operands run left to right.
      const year = draw();
      const month = draw();
      return `${constant(dates())}[Math.floor(${year} * ${YEARS}) * 336 + Math.floor(${month} * 12) * 28 + Math.floor(${draw()} * 28)]`;
    }
    case "string":
      return `places[Math.floor(${draw()} * places.length)]`;
  }
}

/**
 * The statements that compute the values of `fields`, in order, as `v0`, `v1`, …: the fixed draws of
 * each run of fields between codes taken at once into `U` (a code draws again while taken, so it is
 * drawn where it stands). Returns the statements and the size `U` needs.
 */
function valueStatements(fields: readonly FieldSpec[], constants: unknown[]): { statements: string[]; scratch: number } {
  const statements: string[] = [];
  let run: string[] = [];
  let count = 0;
  let scratch = 0;
  const endRun = () => {
    if (count > 0) statements.push(`draws(random, U, ${count});`);
    statements.push(...run);
    scratch = Math.max(scratch, count);
    run = [];
    count = 0;
  };
  const draw = () => `U[${count++}]`;
  fields.forEach((field, index) => {
    if (field.code) {
      endRun();
      const codeHeads = `C${constants.push(heads(`${field.code}-`)) - 1}`;
      statements.push(`const v${index} = drawCode(random, ${numberGroup(`code ${field.code}`)}, ${codeHeads});`);
    } else run.push(`const v${index} = ${valueExpression(field, constants, draw)};`);
  });
  endRun();
  return { statements, scratch };
}

/**
 * The record maker of a type. Field names and values come from the theme definitions and are quoted
 * as JSON strings; numbers in the source are the integers of the field ranges.
 */
export function recordMaker(type: TypeSpec, kind: NameKind): RecordMaker {
  const constants: unknown[] = [];
  const { statements, scratch } = valueStatements(type.fields, constants);
  const values = type.fields.map((field, index) => `${JSON.stringify(field.name)}: v${index}`);
  const source = `return function makeRecord(random, places, names, inCluster) {
    const id = drawId(random, ${numberGroup(`id ${type.prefix}`)}, idHeads);
    const name = names.make(kind, inCluster);
    ${statements.join("\n    ")}
    return { id, type: ${JSON.stringify(type.name)}, name, fields: { ${values.join(", ")} }, links: NO_LINKS };
  };`;
  const parameters = ["drawId", "drawCode", "draws", "U", "idHeads", "kind", "NO_LINKS", ...constants.map((_, index) => `C${index}`)];
  const build = new Function(...parameters, source) as (...values: unknown[]) => RecordMaker;
  return build(drawId, drawCode, draws, new Float64Array(scratch), heads(`${type.prefix}-`), kind, NO_LINKS, ...constants);
}

/** The links maker of a type whose functional relations, in theme order, are `relations`. */
export function linksMaker(relations: readonly string[]): LinksMaker {
  const links = relations.map((name, slot) => `{ relation: ${JSON.stringify(name)}, target: records[functional[at + ${slot}]].id }`);
  return new Function("records", "functional", "at", `return [${links.join(", ")}];`) as LinksMaker;
}
