import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DataError } from "../../core/index.ts";
import { dictEntries, parsePythonJson, type Dict } from "../../python-semantics/index.ts";

/** `assets/tau2/`: tau2-bench's domain files (MIT, see LICENSE there). */
export const TAU2_ASSETS = fileURLToPath(new URL("../../../assets/tau2/", import.meta.url));

export function readAsset(relative: string): string {
  try {
    return readFileSync(`${TAU2_ASSETS}${relative}`, "utf8");
  } catch (error) {
    throw new DataError({
      code: "TAU2_ASSET_MISSING",
      message: `cannot read assets/tau2/${relative} (${(error as Error).message}); restore it from the repository`,
    });
  }
}

export function readJsonAsset<T>(relative: string): T {
  return JSON.parse(readAsset(relative)) as T;
}

/** A DB file, parsed keeping Python's dict order (see ordered-json.ts). */
export function readDbAsset(relative: string): Record<string, unknown> {
  return parsePythonJson(readAsset(relative), { plainNumbers: true }) as Record<string, unknown>;
}

/** Loads once, on first use: environments are registered at start-up but most runs touch one domain. */
export function lazy<T>(load: () => T): () => T {
  let value: T | undefined;
  let loaded = false;
  return () => {
    if (!loaded) {
      value = load();
      loaded = true;
    }
    return value as T;
  };
}

/** Picks fields in a model's declaration order; absent optional fields become null like pydantic's dump. */
export function pick(raw: unknown, fields: readonly string[]): Record<string, unknown> {
  const source = new Map(dictEntries(raw));
  const result: Record<string, unknown> = {};
  for (const field of fields) result[field] = source.get(field) ?? null;
  return result;
}

/** Normalises every value of a dict, keeping it a `Map` when it was one (file order). */
export function mapValues(raw: unknown, normalize: (value: unknown) => unknown): Dict {
  const entries = dictEntries(raw).map(([key, value]) => [key, normalize(value)] as [string, unknown]);
  return raw instanceof Map ? new Map(entries) : Object.fromEntries(entries);
}
