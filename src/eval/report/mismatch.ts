import { ToolgymError } from "../../core/index.ts";
import { canonicalJson } from "../../runs/identity.ts";
import type { LoadedRun } from "./load.ts";

/** Fields of the generation path that must agree before runs are put side by side. */
export const GENERATION_FIELDS = ["chatTemplateHash", "chatTemplateKwargs", "sampling", "maxTurns", "toolSchemasHash", "protocol", "onNoToolCall"] as const;

/** Reports refuse to compare runs whose generation paths or task sets differ (unless allowed). */
export class ReportMismatchError extends ToolgymError {
  readonly fields: string[];
  constructor(options: { message: string; fields: string[] }) {
    super({ code: "REPORT_MISMATCH", message: options.message, boundary: "data" });
    this.fields = options.fields;
  }
}

function leafDifferences(path: string, left: unknown, right: unknown, found: Array<{ field: string; left: unknown; right: unknown }>): void {
  const isObject = (value: unknown) => value !== null && typeof value === "object" && !Array.isArray(value);
  if (isObject(left) && isObject(right)) {
    const keys = [...new Set([...Object.keys(left as object), ...Object.keys(right as object)])].sort();
    for (const key of keys) leafDifferences(`${path}.${key}`, (left as Record<string, unknown>)[key], (right as Record<string, unknown>)[key], found);
    return;
  }
  if (canonicalJson(left ?? null) !== canonicalJson(right ?? null)) found.push({ field: path, left, right });
}

export interface Mismatch {
  benchmark: string;
  baseline: string;
  other: string;
  kind: "generation" | "tasks";
  field: string;
  detail: string;
}

function show(value: unknown): string {
  return value === undefined ? "absent" : canonicalJson(value);
}

/** Every differing field between a baseline run and another run of the same benchmark. */
export function findMismatches(benchmark: string, baseline: LoadedRun, other: LoadedRun): Mismatch[] {
  const mismatches: Mismatch[] = [];
  const a = baseline.metadata;
  const b = other.metadata;
  const labels = { baseline: a.model.label, other: b.model.label };
  for (const field of GENERATION_FIELDS) {
    const found: Array<{ field: string; left: unknown; right: unknown }> = [];
    leafDifferences(field, (a.generation as unknown as Record<string, unknown>)[field], (b.generation as unknown as Record<string, unknown>)[field], found);
    for (const difference of found) {
      mismatches.push({
        benchmark,
        ...labels,
        kind: "generation",
        field: difference.field,
        detail: `${labels.baseline} ${show(difference.left)} vs ${labels.other} ${show(difference.right)}`,
      });
    }
  }
  const taskFields: Array<[string, unknown, unknown]> = [
    ["env.id", a.env.id, b.env.id],
    ["env.split", a.env.split, b.env.split],
    ["env.seed", a.env.seed, b.env.seed],
    ["env.n", a.env.n, b.env.n],
    ["env.samples", a.env.samples, b.env.samples],
    ["env.config", a.env.config, b.env.config],
    ["taskSetHash", a.taskSetHash, b.taskSetHash],
  ];
  for (const [field, left, right] of taskFields) {
    if (canonicalJson(left ?? null) !== canonicalJson(right ?? null))
      mismatches.push({ benchmark, ...labels, kind: "tasks", field, detail: `${labels.baseline} ${show(left)} vs ${labels.other} ${show(right)}` });
  }
  const ids = (run: LoadedRun) => new Set(run.results.map((result) => result.id));
  const left = ids(baseline);
  const right = ids(other);
  const onlyLeft = [...left].filter((id) => !right.has(id)).length;
  const onlyRight = [...right].filter((id) => !left.has(id)).length;
  if (onlyLeft + onlyRight > 0 && a.status === "complete" && b.status === "complete") {
    mismatches.push({
      benchmark,
      ...labels,
      kind: "tasks",
      field: "results",
      detail: `${onlyLeft} episodes only in ${labels.baseline}, ${onlyRight} only in ${labels.other}`,
    });
  }
  return mismatches;
}

export function describeMismatches(mismatches: readonly Mismatch[]): string {
  return mismatches
    .map(
      (mismatch) =>
        `${mismatch.benchmark}: ${mismatch.kind === "generation" ? "generation path" : "task set"} differs in ${mismatch.field} (${mismatch.detail})`,
    )
    .join("; ");
}

export function refuseMismatches(mismatches: readonly Mismatch[]): never {
  const fields = [...new Set(mismatches.map((mismatch) => mismatch.field))];
  throw new ReportMismatchError({
    fields,
    message: `refusing to compare runs whose generation paths or task sets differ — differing fields: ${fields.join(", ")}. ${describeMismatches(mismatches)}. Rerun with the same settings, or pass --allow-mismatch to compare anyway (the table will say so).`,
  });
}
