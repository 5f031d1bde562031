/**
 * The output of the side-by-side benchmarks: a table for people, or with `--json` a JSON array of rows
 * `{name, unit, toolgym, reference, ratio, target, pass}` for CI and reports. `pass` is null on rows
 * that only give context (no target).
 */
export interface ComparisonRow {
  name: string;
  unit: string;
  toolgym: number;
  /** What toolgym is compared with (the Python peer, or an ideal); null when there is nothing to compare. */
  reference: number | null;
  /** toolgym / reference. */
  ratio: number | null;
  /** The target in words, e.g. "ratio ≤ 0.2". */
  target: string;
  pass: boolean | null;
}

export function row(fields: Omit<ComparisonRow, "ratio"> & { ratio?: number | null }): ComparisonRow {
  const ratio = fields.ratio !== undefined ? fields.ratio : fields.reference ? fields.toolgym / fields.reference : null;
  return { ...fields, ratio };
}

function format(value: number | null): string {
  if (value === null || Number.isNaN(value)) return "n/a";
  const size = Math.abs(value);
  return size >= 100 ? value.toFixed(0) : size >= 1 ? value.toFixed(2) : value.toFixed(4);
}

/** Prints the rows as a table (with `header` lines above) or, when the command line has --json, as JSON only. */
export function printRows(rows: ComparisonRow[], header: string[]): void {
  if (process.argv.includes("--json")) {
    console.log(JSON.stringify(rows, null, 2));
    return;
  }
  const cells = [
    ["metric", "unit", "toolgym", "reference", "ratio", "target", ""],
    ...rows.map((entry) => [
      entry.name,
      entry.unit,
      format(entry.toolgym),
      format(entry.reference),
      format(entry.ratio),
      entry.target,
      entry.pass === null ? "" : entry.pass ? "PASS" : "FAIL",
    ]),
  ];
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((line) => line[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join("  ");
  for (const text of header) console.log(text);
  console.log(line(cells[0]!));
  console.log(line(widths.map((width) => "-".repeat(width))));
  for (const entry of cells.slice(1)) console.log(line(entry));
}
