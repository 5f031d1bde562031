/**
 * Python number formatting the official scorers rely on: `round(x, n)` (round-half-even on the exact
 * binary value) and `json.dumps(..., indent=4)` of floats (`repr`: `1.0`, `63.88`).
 */

/**
 * Python's `round(x, digits)` for finite x. `toFixed` rounds the exact binary value too, but breaks
 * exact ties upwards; Python breaks them to even. Exact ties are detected on the exact decimal expansion.
 */
export function pythonRound(value: number, digits: number): number {
  if (!Number.isFinite(value) || Math.abs(value) >= 1e21) return value;
  const negative = value < 0;
  const magnitude = Math.abs(value);
  const exact = magnitude.toFixed(100);
  const point = exact.indexOf(".");
  const tail = exact.slice(point + 1 + digits);
  const isTie = tail[0] === "5" && /^50*$/.test(tail);
  let rounded: number;
  if (isTie) {
    const truncated = exact.slice(0, point + 1 + digits);
    const lastDigit = Number(truncated.replace(".", "").slice(-1));
    rounded = lastDigit % 2 === 0 ? Number(truncated) : Number(magnitude.toFixed(digits));
  } else {
    rounded = Number(magnitude.toFixed(digits));
  }
  return negative ? -rounded : rounded;
}

/** Python `repr(float)`: integral floats print with `.0`; otherwise the shortest round-trip form. */
export function pythonFloatRepr(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${value}.0`;
  return String(value);
}

/** A scorer metric value: a Python float, or a Python int (the official code returns int 0 sometimes). */
export interface PythonNumber {
  value: number;
  isInteger?: boolean;
}

/** `json.dumps(metrics, indent=4)` for a flat dict of numbers, as the official scripts print it. */
export function pythonJsonDumps(metrics: Record<string, PythonNumber>): string {
  const lines = Object.entries(metrics).map(
    ([key, number]) => `    ${JSON.stringify(key)}: ${number.isInteger ? String(number.value) : pythonFloatRepr(number.value)}`,
  );
  return lines.length === 0 ? "{}" : `{\n${lines.join(",\n")}\n}`;
}
