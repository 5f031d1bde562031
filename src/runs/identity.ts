import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { UsageError, type ToolSpec } from "../core/index.ts";
import type { GenerationPath } from "./schemas.ts";

/** The toolgym version recorded in every run: the `version` of the package.json this code ships in. */
export const TOOLGYM_VERSION: string = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/** JSON with object keys sorted, so hashes do not depend on key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

export function sha256(text: string): string {
  return `sha256:${createHash("sha256").update(text).digest("hex")}`;
}

export function toolSchemasHash(tools: readonly ToolSpec[]): string {
  return sha256(canonicalJson(tools));
}

/** Hash of the sorted task ids `env/split/seed/index`. */
export function taskSetHash(envId: string, split: string, seed: number, n: number): string {
  const ids = Array.from({ length: n }, (_, index) => `${envId}/${split}/${seed}/${index}`).sort();
  return sha256(ids.join("\n"));
}

/** Fills in `fingerprint`: the hash of every other field of the generation path. */
export function generationPath(fields: Omit<GenerationPath, "fingerprint">): GenerationPath {
  return { ...fields, fingerprint: sha256(canonicalJson(fields)) };
}

/** What a run id or model label may be: one directory name, never `..`, a slash or a hidden file. */
const PATH_COMPONENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Checks a user-supplied name that becomes one directory under `--out` (a run id, a model label), so
 * `--run-id ../../escape` cannot write outside it. Returns the name.
 */
export function checkPathComponent(option: string, value: string): string {
  if (!PATH_COMPONENT.test(value))
    throw new UsageError({
      code: "PATH_COMPONENT_INVALID",
      message: `${option} '${value}' must be one directory name: letters, digits, '.', '_' or '-', starting with a letter or digit, at most 128 characters`,
    });
  return value;
}

/** A run id that sorts by creation time: `20260101T000000Z-a1b2c3`. */
export function createRunId(date = new Date()): string {
  return `${date
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")}-${randomBytes(3).toString("hex")}`;
}

/** The id of one episode in a run: `<env>/<split>/<seed>/<index>#<sample>`. */
export function episodeId(envId: string, split: string, seed: number, index: number, sample: number): string {
  return `${envId}/${split}/${seed}/${index}#${sample}`;
}
