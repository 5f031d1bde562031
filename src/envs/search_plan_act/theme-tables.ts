import type { FieldSpec, RelationSpec, Theme } from "./themes.ts";

/** Per type of a theme, computed once: its fields by role and the functional relations leaving it. */
export interface TypeTables {
  fields: FieldSpec[];
  /** Fields that are not codes, and fields that may be written. */
  readable: FieldSpec[];
  writable: FieldSpec[];
  numeric: FieldSpec[];
  writableEnums: FieldSpec[];
  codeField: FieldSpec | undefined;
  functionalFrom: RelationSpec[];
  /** For each of `functionalFrom`: the slot of the first functional relation with its name (the link a walk follows). */
  linkSlots: number[];
  /** Compatible (readable field, writable field) pairs by target type name, in copy-goal order. */
  copyPairs: Map<string, Array<[FieldSpec, FieldSpec]>>;
}

export interface ThemeTables {
  types: Map<string, TypeTables>;
  /** The same, as parallel lists in theme order: with 3-6 types a scan by name beats a map lookup. */
  typeNames: string[];
  typeList: TypeTables[];
  linkable: RelationSpec[];
}

const themeTables = new WeakMap<Theme, ThemeTables>();

const writable = (field: FieldSpec): boolean => !field.readOnly && !field.code;

export function tablesOf(theme: Theme): ThemeTables {
  let tables = themeTables.get(theme);
  if (tables) return tables;
  tables = { types: new Map(), typeNames: [], typeList: [], linkable: theme.relations.filter((relation) => !relation.functional) };
  for (const type of theme.types) {
    const functionalFrom = theme.relations.filter((relation) => relation.functional && relation.from === type.name);
    tables.types.set(type.name, {
      fields: type.fields,
      readable: type.fields.filter((field) => !field.code),
      writable: type.fields.filter(writable),
      numeric: type.fields.filter((field) => field.kind === "integer" || field.kind === "money"),
      writableEnums: type.fields.filter((field) => field.kind === "enum" && writable(field)),
      codeField: type.fields.find((field) => field.code),
      functionalFrom,
      linkSlots: functionalFrom.map((relation) => functionalFrom.findIndex((candidate) => candidate.name === relation.name)),
      copyPairs: new Map(),
    });
  }
  for (const [name, typeTables] of tables.types) {
    tables.typeNames.push(name);
    tables.typeList.push(typeTables);
  }
  for (const [, source] of tables.types) {
    for (const [targetName, target] of tables.types) {
      const pairs: Array<[FieldSpec, FieldSpec]> = [];
      for (const fromField of source.readable) {
        for (const toField of target.writable) {
          if (fromField.kind === toField.kind && (fromField.kind !== "enum" || fromField.values?.join() === toField.values?.join()))
            pairs.push([fromField, toField]);
        }
      }
      source.copyPairs.set(targetName, pairs);
    }
  }
  themeTables.set(theme, tables);
  return tables;
}

export const NO_TABLES: TypeTables = {
  fields: [],
  readable: [],
  writable: [],
  numeric: [],
  writableEnums: [],
  codeField: undefined,
  functionalFrom: [],
  linkSlots: [],
  copyPairs: new Map(),
};
