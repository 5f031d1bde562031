import { DataError } from "../../core/index.ts";

/**
 * The TOML subset tau2's telecom DB files use: `[table.path]`, `[[array.of.tables]]` and
 * `key = value` with basic strings, integers, floats, booleans and arrays of those. Floats stay
 * distinguishable only through the model's float fields (as pydantic coerces them anyway).
 */
type Table = Record<string, unknown>;

function parseValue(text: string, file: string, line: number): unknown {
  const value = text.trim();
  if (value.startsWith('"')) return JSON.parse(value);
  if (value === "true") return true;
  if (value === "false") return false;
  if (value.startsWith("[")) {
    const inner = value.slice(1, -1).trim();
    if (inner === "") return [];
    return splitTopLevel(inner).map((item) => parseValue(item, file, line));
  }
  if (/^[+-]?\d[\d_]*(\.\d+)?([eE][+-]?\d+)?$/.test(value)) return Number(value.replaceAll("_", ""));
  throw new DataError({ code: "TOML_UNSUPPORTED", file, line, message: `unsupported TOML value '${value}'` });
}

function splitTopLevel(text: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '"' && text[index - 1] !== "\\") quoted = !quoted;
    else if (!quoted && char === "[") depth++;
    else if (!quoted && char === "]") depth--;
    else if (!quoted && depth === 0 && char === ",") {
      items.push(text.slice(start, index));
      start = index + 1;
    }
  }
  if (text.slice(start).trim() !== "") items.push(text.slice(start));
  return items;
}

function descend(root: Table, path: string[]): Table {
  let node = root;
  for (const key of path) {
    let child = node[key];
    if (Array.isArray(child)) child = child.at(-1);
    if (child === undefined) {
      child = {};
      node[key] = child;
    }
    node = child as Table;
  }
  return node;
}

export function parseToml(text: string, file: string): Table {
  const root: Table = {};
  let current = root;
  text.split("\n").forEach((raw, position) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const arrayHeader = /^\[\[([^\]]+)\]\]$/.exec(line);
    const tableHeader = /^\[([^\]]+)\]$/.exec(line);
    if (arrayHeader) {
      const path = (arrayHeader[1] as string).split(".").map((part) => part.trim());
      const parent = descend(root, path.slice(0, -1));
      const key = path.at(-1) as string;
      const list = (parent[key] ??= []) as Table[];
      current = {};
      list.push(current);
    } else if (tableHeader) {
      current = descend(
        root,
        (tableHeader[1] as string).split(".").map((part) => part.trim()),
      );
    } else {
      const equals = line.indexOf("=");
      if (equals < 0) throw new DataError({ code: "TOML_UNSUPPORTED", file, line: position + 1, message: `expected key = value, got '${line}'` });
      current[line.slice(0, equals).trim()] = parseValue(line.slice(equals + 1), file, position + 1);
    }
  });
  return root;
}
