import { existsSync, readFileSync, statSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { UsageError } from "../core/index.ts";

/**
 * The one option-parsing layer every command uses: numbers with their ranges, JSON, non-empty text,
 * input files and URLs. Each parser throws a UsageError naming the option, the value and what is
 * accepted, so `--n -3`, `--concurrency 0` or `--config ''` fail the same way in every command (exit 2).
 */
export interface Range {
  /** Smallest accepted value (inclusive). */
  min?: number;
  /** Largest accepted value (inclusive). */
  max?: number;
  /** Values must be strictly greater than this (e.g. a time-out > 0). */
  above?: number;
}

function describeRange(range: Range): string {
  const parts: string[] = [];
  if (range.above !== undefined) parts.push(`> ${range.above}`);
  if (range.min !== undefined && range.max !== undefined) return `between ${range.min} and ${range.max}`;
  if (range.min !== undefined) parts.push(`≥ ${range.min}`);
  if (range.max !== undefined) parts.push(`≤ ${range.max}`);
  return parts.join(" and ");
}

function checkRange(name: string, value: string, number: number, range: Range, kind: string): number {
  const outside =
    (range.min !== undefined && number < range.min) || (range.max !== undefined && number > range.max) || (range.above !== undefined && number <= range.above);
  if (outside) throw new UsageError({ code: "OPTION_INVALID", message: `${name} must be ${kind} ${describeRange(range)}, got '${value}'` });
  return number;
}

/**
 * Decimal digits only: `Number()` also reads `0x10`, `0b11`, `1e2` and `1_0`-free oddities as integers, and a
 * count typed that way is a typo far more often than a wish (issue 37).
 */
const DECIMAL_INTEGER = /^[+-]?\d+$/;
/** A decimal number with an optional exponent (`0.5`, `1e-3`); never hex, binary, octal or `Infinity`. */
const DECIMAL_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * An integer option, e.g. `parseInteger("--n", { min: 1 })`, written in decimal digits. `except` lists values
 * inside the range that are still refused (`--top-k 0`: -1 disables top-k, 0 is no valid k), with the reason.
 */
export function parseInteger(name: string, range: Range = {}, except: { value: number; reason: string }[] = []) {
  return (value: string): number => {
    const number = DECIMAL_INTEGER.test(value.trim()) ? Number(value) : Number.NaN;
    if (!Number.isInteger(number)) {
      const kind = Object.keys(range).length > 0 ? ` ${describeRange(range)}` : "";
      throw new UsageError({ code: "OPTION_INVALID", message: `${name} must be an integer${kind}, got '${value}'` });
    }
    // Past 2^53 integers are no longer exact (99999999999999999999 reads as 1e20): no count is that large.
    if (!Number.isSafeInteger(number))
      throw new UsageError({
        code: "OPTION_INVALID",
        message: `${name} must be an integer ${describeRange({ ...range, max: range.max ?? Number.MAX_SAFE_INTEGER })}, got '${value}'`,
      });
    const refused = except.find((candidate) => candidate.value === number);
    if (refused) throw new UsageError({ code: "OPTION_INVALID", message: `${name} ${value} is refused: ${refused.reason}` });
    return checkRange(name, value, number, range, "an integer");
  };
}

/** A finite number option, e.g. `parseNumber("--timeout", { above: 0 })`. */
export function parseNumber(name: string, range: Range = {}) {
  return (value: string): number => {
    const number = DECIMAL_NUMBER.test(value.trim()) ? Number(value) : Number.NaN;
    if (!Number.isFinite(number)) throw new UsageError({ code: "OPTION_INVALID", message: `${name} must be a number, got '${value}'` });
    return checkRange(name, value, number, range, "a number");
  };
}

/** A TCP port: 0 (pick a free one) to 65535. */
export const parsePort = (name: string) => parseInteger(name, { min: 0, max: 65535 });

/** Text that must not be empty: `--env ''` or `--out ''` is a mistake, never "use the default". */
export function parseText(name: string) {
  return (value: string): string => {
    if (value.trim() === "") throw new UsageError({ code: "OPTION_EMPTY", message: `${name} needs a value, got an empty string` });
    return value;
  };
}

/** A repeatable non-empty text option (`--model A --model B`). */
export function collectText(name: string) {
  const text = parseText(name);
  return (value: string, previous: string[] = []): string[] => [...previous, text(value)];
}

/** JSON text, parsed; `object` requires a JSON object (configs, kwargs). */
export function parseJson(name: string, options: { object?: boolean; example?: string } = {}) {
  return (value: string): unknown => {
    if (value.trim() === "")
      throw new UsageError({ code: "OPTION_EMPTY", message: `${name} needs JSON, got an empty string${options.example ? `; e.g. '${options.example}'` : ""}` });
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw new UsageError({
        code: "OPTION_INVALID",
        message: `${name} is not valid JSON (${(error as Error).message})${options.example ? `; e.g. '${options.example}'` : ""}`,
      });
    }
    if (options.object && (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)))
      throw new UsageError({ code: "OPTION_INVALID", message: `${name} must be a JSON object${options.example ? `, e.g. '${options.example}'` : ""}` });
    return parsed;
  };
}

/** A JSON object kept as text (environment configs are parsed by the environment's own schema). */
export function parseJsonText(name: string, example?: string) {
  const parse = parseJson(name, { object: true, ...(example ? { example } : {}) });
  return (value: string): string => {
    parse(value);
    return value;
  };
}

/**
 * An environment config (`--config`): JSON text, or the path of a .json, .yaml or .yml file holding one, as
 * `pipeline --config FILE` takes a file. Returned as JSON text, which the environment's own schema then checks.
 */
export function parseConfigOption(name: string) {
  const text = parseJsonText(name, '{"key": 1}');
  return (value: string): string => {
    const path = value.trim();
    if (path.startsWith("{") || !/\.(json|ya?ml)$/i.test(path)) return text(value);
    requireInputFile(name, path);
    let parsed: unknown;
    try {
      const content = readFileSync(path, "utf8").replace(/^\uFEFF/, "");
      parsed = /\.json$/i.test(path) ? JSON.parse(content) : parseYaml(content);
    } catch (error) {
      throw new UsageError({
        code: "CONFIG_FILE_INVALID",
        message: `${name} ${path}: not valid ${/\.json$/i.test(path) ? "JSON" : "YAML"} (${(error as Error).message.split("\n")[0]})`,
      });
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new UsageError({ code: "CONFIG_FILE_INVALID", message: `${name} ${path}: must hold one object of config keys, e.g. {"key": 1}` });
    return JSON.stringify(parsed);
  };
}

/** An existing, non-empty file named on the command line (a missing input is the user's mistake: exit 2). */
export function requireInputFile(name: string, path: string, options: { allowEmpty?: boolean } = {}): string {
  if (path.trim() === "") throw new UsageError({ code: "OPTION_EMPTY", message: `${name} needs a file path, got an empty string` });
  if (!existsSync(path)) throw new UsageError({ code: "FILE_NOT_FOUND", message: `${name}: no such file '${path}'` });
  const stats = statSync(path);
  if (!stats.isFile())
    throw new UsageError({
      code: "FILE_NOT_FOUND",
      message: `${name}: '${path}' is ${stats.isDirectory() ? "a directory" : "not a regular file"}, not a file`,
    });
  if (!options.allowEmpty && stats.size === 0) throw new UsageError({ code: "FILE_EMPTY", message: `${name}: '${path}' is empty` });
  return path;
}

/** An existing directory named on the command line. */
export function requireDirectory(name: string, path: string): string {
  if (path.trim() === "") throw new UsageError({ code: "OPTION_EMPTY", message: `${name} needs a directory, got an empty string` });
  if (!existsSync(path)) throw new UsageError({ code: "FILE_NOT_FOUND", message: `${name}: no such directory '${path}'` });
  if (!statSync(path).isDirectory()) throw new UsageError({ code: "FILE_NOT_FOUND", message: `${name}: '${path}' is a file, not a directory` });
  return path;
}

/**
 * `--out DIR` of a command that writes a tree of files (eval, a suite, the pipeline): a path that exists as a
 * file is the user's mistake (exit 2) before anything runs, not a failed mkdir inside the run.
 */
export function requireOutputDirectory(name: string, path: string): string {
  if (existsSync(path) && !statSync(path).isDirectory())
    throw new UsageError({ code: "OUT_NOT_DIRECTORY", message: `${name} '${path}' is a file; give a directory (it will hold the runs), or remove the file` });
  return path;
}

/** An input file option, checked when parsed. */
export function parseInputFile(name: string) {
  return (value: string): string => requireInputFile(name, value);
}

/** An http(s) URL, e.g. a model server's base URL. */
export function requireHttpUrl(name: string, value: string, example = "http://127.0.0.1:8000/v1"): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError({ code: "URL_INVALID", message: `${name}: '${value}' is not a URL; e.g. ${example}` });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError({ code: "URL_INVALID", message: `${name}: '${value}' is not an http(s) URL; e.g. ${example}` });
  return value;
}

/** A value from a fixed list. */
export function parseChoice<Choice extends string>(name: string, choices: readonly Choice[]) {
  return (value: string): Choice => {
    if ((choices as readonly string[]).includes(value)) return value as Choice;
    throw new UsageError({ code: "OPTION_INVALID", message: `${name} must be ${choices.join(" or ")}, got '${value}'` });
  };
}

/** Splits a comma-separated list, refusing empty items (`--env a,,b`). */
export function splitList(name: string, value: string): string[] {
  const items = value.split(",").map((item) => item.trim());
  if (items.some((item) => item === "")) throw new UsageError({ code: "OPTION_EMPTY", message: `${name} has an empty item in '${value}'` });
  return items;
}

/** `--split`, or the environment's default; a split the environment does not have is a usage error. */
export function resolveSplit(env: { id: string; splits: readonly string[]; defaultSplit: string }, split: string | undefined): string {
  const chosen = split ?? env.defaultSplit;
  if (!env.splits.includes(chosen))
    throw new UsageError({ code: "SPLIT_UNKNOWN", message: `unknown split '${chosen}' for ${env.id}; splits: ${env.splits.join(", ")}` });
  return chosen;
}

/**
 * `--index` against the environment's task count (environments with a fixed dataset declare one), so
 * task 40 of a 40-task split is a usage error instead of a silent wrap-around to task 0.
 */
export function checkTaskIndex(
  env: { id: string; taskCount?: (address: { split: string; config: never }) => number },
  split: string,
  config: unknown,
  index: number,
): void {
  const available = env.taskCount?.({ split, config: config as never });
  if (available === undefined || index < available) return;
  throw new UsageError({
    code: "INDEX_OUT_OF_RANGE",
    message: `--index ${index} is beyond the ${available} tasks of ${env.id} (split ${split}); pass an index from 0 to ${available - 1}`,
  });
}
