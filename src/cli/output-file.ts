import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";

/**
 * Runs `produce` against a temporary path beside `out` (same directory and extension, so writers that
 * pick a format by extension still work) and renames it into place only when it succeeds: a command
 * that fails leaves no empty or half-written output file behind. `companions` are suffixes of files the
 * producer writes beside its output (e.g. `.report.json`); they move (or are removed) with it.
 */
export async function writeOutputAtomically<Result>(
  out: string,
  produce: (path: string) => Promise<Result> | Result,
  options: { companions?: readonly string[] } = {},
): Promise<Result> {
  mkdirSync(dirname(out) || ".", { recursive: true });
  const extension = extname(out);
  const temporary = join(dirname(out), `.${basename(out, extension)}.${process.pid}.partial${extension}`);
  const companions = options.companions ?? [];
  const cleanUp = () => {
    for (const path of [temporary, ...companions.map((suffix) => `${temporary}${suffix}`)]) rmSync(path, { force: true });
  };
  let result: Result;
  try {
    result = await produce(temporary);
  } catch (error) {
    cleanUp();
    throw error;
  }
  renameSync(temporary, out);
  for (const suffix of companions) if (existsSync(`${temporary}${suffix}`)) renameSync(`${temporary}${suffix}`, `${out}${suffix}`);
  return result;
}
