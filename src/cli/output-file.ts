import { existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import { ToolgymError, UsageError } from "../core/index.ts";

/** The `--force` option of every command that writes a file, in one place. */
export const FORCE_OPTION = ["--force", "overwrite --out when it already exists"] as const;

/** `--out -`: standard output, for the commands whose output is one text (view, report, export). */
export const STDOUT = "-";

/**
 * Checks `--out` before any work: `-` is refused (the commands that print take it before calling this; a file
 * named `-` is never what was meant), a directory is refused, and an existing file is refused unless
 * `force` (no command overwrites a file it did not create without being told to, so `--out README.md`
 * in the wrong folder cannot clobber a project's README).
 */
export function checkOutputPath(out: string, options: { force?: boolean; option?: string } = {}): void {
  const option = options.option ?? "--out";
  if (out === STDOUT)
    throw new UsageError({
      code: "OUT_STDOUT_UNSUPPORTED",
      message: `${option} - (standard output) is for view, report and export; this command writes a file: pass a file path`,
    });
  if (!existsSync(out)) return;
  if (statSync(out).isDirectory())
    throw new UsageError({
      code: "OUT_IS_DIRECTORY",
      message: `${option} '${out}' is a directory; pass a file path, e.g. ${join(out, "out" + (extname(out) || ".txt"))}`,
    });
  if (!options.force)
    throw new UsageError({ code: "OUT_EXISTS", message: `${option} '${out}' already exists; pass --force to overwrite it, or another ${option}` });
}

/** An error whose message or path names the temporary file, renamed to name `out` (users never see our temporary names). */
function renamedError(error: unknown, temporary: string, out: string): unknown {
  if (!(error instanceof Error)) return error;
  if (error.message.includes(temporary)) error.message = error.message.split(temporary).join(out);
  const system = error as NodeJS.ErrnoException;
  if (typeof system.path === "string" && system.path.includes(temporary)) system.path = system.path.split(temporary).join(out);
  return error;
}

/**
 * Writes a command's output file. The contract every writing command relies on:
 * - `--out` is checked first (`checkOutputPath`): never a directory, never an existing file without `force`;
 * - `produce` writes a temporary path beside `out` (same directory and extension, so writers that pick a
 *   format by extension still work), renamed into place only when it succeeds: a command that fails
 *   leaves no empty or half-written output behind, and an existing `out` is untouched until the rename;
 * - errors name `out`, never the temporary file.
 * `companions` are suffixes of files the producer writes beside its output (e.g. `.report.json`); they
 * move (or are removed) with it.
 */
export async function writeOutputAtomically<Result>(
  out: string,
  produce: (path: string) => Promise<Result> | Result,
  options: { companions?: readonly string[]; force?: boolean; signal?: AbortSignal } = {},
): Promise<Result> {
  checkOutputPath(out, options);
  mkdirSync(dirname(out) || ".", { recursive: true });
  const extension = extname(out);
  const temporary = join(dirname(out), `.${basename(out, extension)}.${process.pid}.partial${extension}`);
  const companions = options.companions ?? [];
  const cleanUp = () => {
    for (const path of [temporary, ...companions.map((suffix) => `${temporary}${suffix}`)]) rmSync(path, { force: true });
  };
  let result: Result;
  // Ctrl-C or SIGTERM: the partial files go at once, and the command ends with one line (exit 130).
  let stop: (() => void) | undefined;
  const interrupted = new Promise<never>((_, reject) => {
    stop = () =>
      reject(new ToolgymError({ code: "INTERRUPTED", boundary: "cli", message: `interrupted; nothing was written to ${out} (its partial file was removed)` }));
    if (options.signal?.aborted) stop();
    else options.signal?.addEventListener("abort", stop, { once: true });
  });
  try {
    const producing = Promise.resolve().then(() => produce(temporary));
    result = options.signal ? await Promise.race([producing, interrupted]) : await producing;
    renameSync(temporary, out);
  } catch (error) {
    cleanUp();
    throw renamedError(error, temporary, out);
  } finally {
    if (stop) options.signal?.removeEventListener("abort", stop);
  }
  for (const suffix of companions) if (existsSync(`${temporary}${suffix}`)) renameSync(`${temporary}${suffix}`, `${out}${suffix}`);
  return result;
}
