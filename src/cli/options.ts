import { UsageError } from "../core/index.ts";

export function parseInteger(name: string) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number)) throw new UsageError({ message: `${name} must be an integer, got '${value}'` });
    return number;
  };
}

export function parseNumber(name: string) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isFinite(number)) throw new UsageError({ message: `${name} must be a number, got '${value}'` });
    return number;
  };
}

export function parseJsonOption(name: string, value: string | undefined): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new UsageError({ message: `${name} is not valid JSON (${(error as Error).message})` });
  }
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function writeJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
