/**
 * The themes of search_plan_act worlds. Each theme defines 4 entity types with typed fields and typed
 * relations (the data is in theme-sources.ts). Fields are written compactly as "name kind [argument] | phrase":
 *   enum a,b,c · integer 1-40 · money 5000-900000 · date · string place · code PX (unique, read-only)
 * Relations: "source relation target | phrase". Functional relations (every source record has exactly
 * one) form the chains of multi-hop tasks; linkable ones are what `link_records` may add.
 */
import { THEME_SOURCES, type ThemeSource } from "./theme-sources.ts";

export type FieldKind = "string" | "integer" | "money" | "date" | "enum";

export interface FieldSpec {
  name: string;
  /** How task text names the field ("hire date"); tool calls and results use `name`. */
  phrase: string;
  kind: FieldKind;
  values?: readonly string[];
  min?: number;
  max?: number;
  /** Code prefix: a unique, read-only code such as "PX-44712". */
  code?: string;
  readOnly: boolean;
}

export interface TypeSpec {
  name: string;
  prefix: string;
  /** "person" for first + last names, otherwise the nouns that end thing names ("Calloway Initiative"). */
  naming: "person" | readonly string[];
  fields: FieldSpec[];
}

export interface RelationSpec {
  name: string;
  from: string;
  to: string;
  /** Verb phrase from the source's side: "the office that the project is based in". */
  phrase: string;
  functional: boolean;
}

export interface Theme {
  name: string;
  description: string;
  /** Reserved for search_plan_ood; never generated for train/eval. */
  ood: boolean;
  types: TypeSpec[];
  relations: RelationSpec[];
}

function parseField(text: string): FieldSpec {
  const [head, phrase] = text.split("|").map((part) => part.trim()) as [string, string | undefined];
  const [name, kind, argument] = head.split(/\s+/) as [string, string, string | undefined];
  if (!phrase) throw new Error(`theme field '${text}': no phrase (write "name kind [argument] | phrase")`);
  if (kind === "enum") return { name, phrase, kind, values: (argument as string).split(","), readOnly: false };
  if (kind === "integer" || kind === "money") {
    const [min, max] = (argument as string).split("-").map(Number) as [number, number];
    return { name, phrase, kind, min, max, readOnly: false };
  }
  if (kind === "code") return { name, phrase, kind: "string", code: argument, readOnly: true };
  if (kind === "date" || kind === "string") return { name, phrase, kind, readOnly: false };
  throw new Error(`theme field '${text}': unknown kind '${kind}'`);
}

function parseRelation(text: string, functional: boolean): RelationSpec {
  const [head, phrase] = text.split("|").map((part) => part.trim()) as [string, string];
  const [from, name, to] = head.split(/\s+/) as [string, string, string];
  return { name, from, to, phrase, functional };
}

function buildTheme(source: ThemeSource): Theme {
  return {
    name: source.name,
    description: source.description,
    ood: source.ood,
    types: source.types.map((type) => ({
      name: type.name,
      prefix: type.prefix,
      naming: type.naming === "person" ? "person" : type.naming.split(","),
      fields: type.fields.split(";").map(parseField),
    })),
    relations: [...source.functional.map((text) => parseRelation(text, true)), ...source.linkable.map((text) => parseRelation(text, false))],
  };
}

export const THEMES: readonly Theme[] = THEME_SOURCES.map(buildTheme);

export function themeByName(name: string): Theme | undefined {
  return THEMES.find((theme) => theme.name === name);
}

export const IN_DISTRIBUTION_THEMES = THEMES.filter((theme) => !theme.ood).map((theme) => theme.name);
export const OOD_THEMES = THEMES.filter((theme) => theme.ood).map((theme) => theme.name);
