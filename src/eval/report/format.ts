/** Number formatting shared by the markdown, HTML and card renderers. */

const MINUS = "\u2212";

export function formatValue(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return "—";
  const text = value.toFixed(digits);
  return text.startsWith("-") ? `${MINUS}${text.slice(1)}` : text;
}

/** A signed value: "+0.002", "−0.010" (typographic minus). */
export function formatSigned(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return "—";
  const text = Math.abs(value).toFixed(digits);
  if (Number(text) === 0) return `+${text}`;
  return value < 0 ? `${MINUS}${text}` : `+${text}`;
}

export function formatInterval(low: number, high: number, signed = false): string {
  const format = signed ? formatSigned : formatValue;
  return `[${format(low)}, ${format(high)}]`;
}

/** p-values: two decimals above 0.1, three above 0.001, then scientific ("2.3e-5"). */
export function formatP(p: number): string {
  if (!Number.isFinite(p)) return "—";
  if (p >= 0.1) return p.toFixed(2);
  if (p >= 0.001) return p.toFixed(3);
  return p.toExponential(1).replace("e-", "e−");
}

/** "p = 0.012" or, when no bootstrap resample was as extreme, "p ≤ 1.0e−4" (the resolution limit). */
export function formatPValue(p: number, atFloor = false): string {
  return atFloor ? `p ≤ ${formatP(p)}` : `p = ${formatP(p)}`;
}

/** Table cell: raw p and Holm-adjusted p in brackets. */
export function formatPair(comparison: { pValue: number; pHolm: number; pFloor?: boolean }): string {
  const prefix = comparison.pFloor ? "≤ " : "";
  return `${prefix}${formatP(comparison.pValue)} (${prefix}${formatP(comparison.pHolm)})`;
}
