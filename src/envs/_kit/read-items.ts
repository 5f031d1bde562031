import { readFileSync } from "node:fs";
import { DataError, UsageError } from "../../core/index.ts";

/**
 * Reads a replay input file: one JSON array, or JSON Lines with one item per line. `option` names the
 * command-line option the path came from, for the error message.
 */
export function readJsonItems(path: string, option: string): unknown[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError({
      code: "FILE_UNREADABLE",
      message: `cannot read ${option} file '${path}': ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    });
  }
  const trimmed = text.trim();
  if (trimmed === "")
    throw new DataError({ code: "FILE_EMPTY", file: path, message: `the ${option} file is empty; give a JSON array or one JSON value per line` });
  if (trimmed.startsWith("[")) {
    try {
      return JSON.parse(trimmed) as unknown[];
    } catch (error) {
      throw new DataError({ code: "JSON_INVALID", file: path, message: `not valid JSON (${(error as Error).message})` });
    }
  }
  const items: unknown[] = [];
  text.split("\n").forEach((line, position) => {
    if (line.trim() === "") return;
    try {
      items.push(JSON.parse(line));
    } catch (error) {
      throw new DataError({ code: "JSON_INVALID", file: path, line: position + 1, message: `not valid JSON (${(error as Error).message})` });
    }
  });
  return items;
}
