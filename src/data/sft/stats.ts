/** The SFT preparation report: rows in/out/skipped by reason, truncations, token histogram, label share. */
import type { SftLineResult } from "./build-row.ts";

export interface SftIssue {
  line: number;
  reason: string;
  detail: string;
}

export interface SftReport {
  input: string;
  output: string;
  rows_in: number;
  rows_out: number;
  skipped: Record<string, number>;
  truncations: Record<string, number>;
  token_histogram: { bucket: string; rows: number }[];
  tokens: number;
  label_tokens: number;
  label_token_share: number;
  max_row_tokens: number;
  /** Line-numbered problems (malformed lines, prefix-check failures, …); the first `issueLimit` kept. */
  issues: SftIssue[];
  issues_omitted: number;
  segment_cache: { hits: number; misses: number };
  seconds: number;
}

const histogramEdges = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072];

function bucketName(index: number): string {
  if (index === 0) return `<=${histogramEdges[0]}`;
  if (index === histogramEdges.length) return `>${histogramEdges.at(-1)}`;
  return `${histogramEdges[index - 1] + 1}-${histogramEdges[index]}`;
}

/** Reasons that are data selection, not problems: they are counted but not listed as issues. */
const quietReasons = new Set(["not-correct"]);

export class SftStatsCollector {
  private readonly report: SftReport;
  private readonly histogram = new Array<number>(histogramEdges.length + 1).fill(0);

  constructor(
    input: string,
    output: string,
    private readonly issueLimit = 1000,
  ) {
    this.report = {
      input,
      output,
      rows_in: 0,
      rows_out: 0,
      skipped: {},
      truncations: { none: 0, history: 0, payload: 0, "history+payload": 0 },
      token_histogram: [],
      tokens: 0,
      label_tokens: 0,
      label_token_share: 0,
      max_row_tokens: 0,
      issues: [],
      issues_omitted: 0,
      segment_cache: { hits: 0, misses: 0 },
      seconds: 0,
    };
  }

  get rowsIn(): number {
    return this.report.rows_in;
  }

  add(result: SftLineResult): void {
    const report = this.report;
    report.rows_in++;
    if (result.kind === "skip") {
      report.skipped[result.reason] = (report.skipped[result.reason] ?? 0) + 1;
      if (quietReasons.has(result.reason)) return;
      if (report.issues.length < this.issueLimit) report.issues.push({ line: result.line, reason: result.reason, detail: result.detail });
      else report.issues_omitted++;
      return;
    }
    const { row } = result;
    const tokens = row.inputIds.length;
    report.rows_out++;
    report.tokens += tokens;
    report.label_tokens += tokens - row.promptLength;
    report.max_row_tokens = Math.max(report.max_row_tokens, tokens);
    report.truncations[row.truncation.kind]++;
    const bucket = histogramEdges.findIndex((edge) => tokens <= edge);
    this.histogram[bucket < 0 ? histogramEdges.length : bucket]++;
  }

  addCache(stats: { hits: number; misses: number }): void {
    this.report.segment_cache.hits += stats.hits;
    this.report.segment_cache.misses += stats.misses;
  }

  finish(seconds: number): SftReport {
    const report = this.report;
    report.seconds = seconds;
    report.label_token_share = report.tokens === 0 ? 0 : report.label_tokens / report.tokens;
    report.token_histogram = this.histogram.map((rows, index) => ({ bucket: bucketName(index), rows })).filter((entry) => entry.rows > 0);
    report.issues.sort((left, right) => left.line - right.line);
    return report;
  }
}

/** A short human-readable summary of a report. */
export function formatSftReport(report: SftReport): string {
  const lines = [
    `rows in ${report.rows_in}, out ${report.rows_out}, skipped ${report.rows_in - report.rows_out} in ${report.seconds.toFixed(1)} s`,
    `tokens ${report.tokens} (label share ${(100 * report.label_token_share).toFixed(1)}%), longest row ${report.max_row_tokens}`,
    `truncations: ${Object.entries(report.truncations)
      .map(([kind, count]) => `${kind} ${count}`)
      .join(", ")}`,
  ];
  if (Object.keys(report.skipped).length > 0)
    lines.push(
      `skipped: ${Object.entries(report.skipped)
        .map(([reason, count]) => `${reason} ${count}`)
        .join(", ")}`,
    );
  lines.push(`token histogram: ${report.token_histogram.map((entry) => `${entry.bucket}: ${entry.rows}`).join(", ")}`);
  for (const issue of report.issues.slice(0, 20)) lines.push(`  line ${issue.line}: ${issue.reason}: ${issue.detail}`);
  if (report.issues.length > 20 || report.issues_omitted > 0)
    lines.push(`  … ${report.issues.length - 20 + report.issues_omitted} more issues in the report file`);
  return lines.join("\n");
}
