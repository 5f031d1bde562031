/**
 * Python's floats. Python tells int from float, JavaScript numbers do not: a non-integral number is
 * always a float, and an integral value that Python holds as a float (`5.0`) is a `PythonFloat`.
 */
export class PythonFloat {
  constructor(readonly value: number) {}
}

/**
 * Python's `repr(float)` (and `str`): the shortest round-trip digits, which JavaScript computes too, laid
 * out as Python does: positional from 1e-4 up to 1e16 (with `.0` when integral), else `d.ddde±XX`.
 */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (value === Infinity) return "inf";
  if (value === -Infinity) return "-inf";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const sign = value < 0 ? "-" : "";
  const [mantissa, exponentText] = Math.abs(value).toExponential().split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    const body = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${body}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  const point = exponent + 1;
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}.0`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** A float as `json.dumps` writes it: `repr`, except the non-finite values (`NaN`, `Infinity`). */
export function pythonJsonFloat(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "Infinity";
  if (value === -Infinity) return "-Infinity";
  return pythonFloatRepr(value);
}

/**
 * Python's `round(x, digits)` for a float: the nearest value of the exact binary double, ties to even.
 * `toFixed` also rounds the exact binary value but breaks exact ties upwards, so ties are settled here.
 */
export function pythonRound(value: number, digits: number): number {
  if (!Number.isFinite(value) || Math.abs(value) >= 1e21) return value;
  const magnitude = Math.abs(value);
  const exact = magnitude.toFixed(100);
  const point = exact.indexOf(".");
  const tail = exact.slice(point + 1 + digits);
  let rounded: number;
  if (/^50*$/.test(tail)) {
    const truncated = exact.slice(0, point + 1 + digits);
    const lastDigit = Number(truncated.replace(".", "").slice(-1));
    rounded = lastDigit % 2 === 0 ? Number(truncated) : Number(magnitude.toFixed(digits));
  } else {
    rounded = Number(magnitude.toFixed(digits));
  }
  return value < 0 || Object.is(value, -0) ? -rounded : rounded;
}

/**
 * Python's `format(x, ".Nf")` (an f-string's `{x:.2f}`): `inf`/`nan` where JavaScript writes
 * `Infinity`/`NaN`, and every digit of a large value where `toFixed` switches to exponent notation at 1e21.
 */
export function pythonFormatFixed(value: number, digits: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  if (Math.abs(value) < 1e21) return value.toFixed(digits);
  // Doubles this large are integers: their exact decimal expansion, then the zero fraction.
  return `${BigInt(value).toString()}${digits > 0 ? `.${"0".repeat(digits)}` : ""}`;
}
