/** Small inline-SVG charts for the self-contained HTML report (no scripts, no external resources). */

export const PALETTE = ["#4062bb", "#d9822b", "#3a9d5d", "#b33f62", "#7d5ba6", "#8c6d31"];

export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

const WIDTH = 360;
const HEIGHT = 220;
const MARGIN = { top: 24, right: 12, bottom: 44, left: 44 };

/** A small chart (one diagnostics count) beside others of its kind. */
export const SMALL = { width: 200, height: 180 };

/** Width of one character of the 12px bold title, generously, so a wrapped line never overflows. */
const TITLE_CHARACTER = 7.5;
const TITLE_LINE = 14;

/**
 * Splits a chart title into lines that fit `width`: after spaces where it can, inside a long word where
 * it must. The lines joined give the title back unchanged (its text content stays searchable).
 */
export function wrapTitle(title: string, width: number): string[] {
  const perLine = Math.max(8, Math.floor(width / TITLE_CHARACTER));
  const lines: string[] = [];
  let rest = title;
  while (rest.length > perLine) {
    const space = rest.lastIndexOf(" ", perLine);
    const cut = space > 0 ? space + 1 : perLine;
    lines.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  lines.push(rest);
  return lines;
}

function frame(title: string, body: string, label: string, size: { width: number; height: number }, maximum: number): string {
  const { width } = size;
  // A title longer than the chart wraps onto more lines, and the plot moves down to make room.
  const lines = wrapTitle(title, width - 8);
  const extra = (lines.length - 1) * TITLE_LINE;
  const height = size.height + extra;
  const text = lines.map((line, index) => `<tspan x="${width / 2}" dy="${index === 0 ? 0 : TITLE_LINE}">${escapeXml(line)}</tspan>`).join("");
  const plot = extra > 0 ? `<g transform="translate(0 ${extra})">${body}</g>` : body;
  return `<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" aria-label="${escapeXml(label)}" data-axis-min="0" data-axis-max="${maximum}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><title>${escapeXml(label)}</title><text x="${width / 2}" y="15" text-anchor="middle" class="chart-title">${text}</text>${plot}</svg>`;
}

/** The smallest of 1, 2, 2.5 or 5 times a power of ten at or above `value`, so axis ticks stay round. */
export function niceCeiling(value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value - 1e-12) return step * power;
  return 10 * power;
}

function axis(maximum: number, size: { width: number; height: number }): { y: (value: number) => number; body: string } {
  const { width, height } = size;
  const plotHeight = height - MARGIN.top - MARGIN.bottom;
  const y = (value: number) => MARGIN.top + plotHeight * (1 - Math.max(0, Math.min(value, maximum)) / maximum);
  let body = `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${height - MARGIN.bottom}" stroke="#555"/><line x1="${MARGIN.left}" y1="${height - MARGIN.bottom}" x2="${width - MARGIN.right}" y2="${height - MARGIN.bottom}" stroke="#555"/>`;
  for (let tick = 0; tick <= 4; tick++) {
    const value = (maximum * tick) / 4;
    const position = y(value).toFixed(1);
    const text = Number.isInteger(value) ? String(value) : String(Number(value.toFixed(3)));
    body += `<line x1="${MARGIN.left - 4}" y1="${position}" x2="${width - MARGIN.right}" y2="${position}" stroke="#ddd"/><text x="${MARGIN.left - 6}" y="${position}" dy="4" text-anchor="end" class="tick y-tick">${text}</text>`;
  }
  return { y, body };
}

export interface Bar {
  label: string;
  value: number;
  low?: number;
  high?: number;
  color: string;
  /** Why the bar has no value (e.g. "not computed in 12 episodes"), shown in place of one. */
  missing?: string;
}

/** Vertical bars with optional CI whiskers; groups share an x label (e.g. a component, models inside). */
export function barChart(options: {
  title: string;
  groups: Array<{ label: string; bars: Bar[] }>;
  /** A fixed top of the axis (e.g. 1 for values in [0,1]); otherwise a round number above the largest value. */
  maximum?: number;
  label: string;
  size?: { width: number; height: number };
}): string {
  const size = options.size ?? { width: WIDTH, height: HEIGHT };
  const values = options.groups.flatMap((group) => group.bars.flatMap((bar) => [bar.value, bar.high ?? bar.value])).filter(Number.isFinite);
  const maximum = options.maximum ?? niceCeiling(Math.max(1, ...values));
  const { y, body: axisBody } = axis(maximum, size);
  const plotWidth = size.width - MARGIN.left - MARGIN.right;
  const groupWidth = plotWidth / Math.max(1, options.groups.length);
  let body = axisBody;
  options.groups.forEach((group, groupIndex) => {
    const x0 = MARGIN.left + groupIndex * groupWidth;
    const barWidth = (groupWidth * 0.8) / Math.max(1, group.bars.length);
    group.bars.forEach((bar, barIndex) => {
      const x = x0 + groupWidth * 0.1 + barIndex * barWidth;
      const top = Number.isFinite(bar.value) ? y(bar.value) : y(0);
      body += `<rect class="bar" x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${(barWidth * 0.9).toFixed(1)}" height="${(y(0) - top).toFixed(1)}" fill="${bar.color}"><title>${escapeXml(`${bar.label}: ${Number.isFinite(bar.value) ? bar.value.toFixed(3) : (bar.missing ?? "n/a")}${bar.low !== undefined ? ` [${bar.low.toFixed(3)}, ${(bar.high ?? bar.value).toFixed(3)}]` : ""}`)}</title></rect>`;
      if (bar.low !== undefined && bar.high !== undefined && Number.isFinite(bar.low)) {
        const center = (x + (barWidth * 0.9) / 2).toFixed(1);
        body += `<path class="whisker" d="M${center} ${y(bar.low).toFixed(1)}V${y(bar.high).toFixed(1)}M${(Number(center) - 4).toFixed(1)} ${y(bar.low).toFixed(1)}h8M${(Number(center) - 4).toFixed(1)} ${y(bar.high).toFixed(1)}h8" stroke="#222" stroke-width="1.5" fill="none"/>`;
      }
    });
    body += `<text x="${(x0 + groupWidth / 2).toFixed(1)}" y="${size.height - MARGIN.bottom + 16}" text-anchor="middle" class="tick x-label">${escapeXml(group.label)}</text>`;
  });
  return frame(options.title, body, options.label, size, maximum);
}

/** Histogram of integer counts (e.g. turns per episode), one translucent series per model. */
export function histogram(options: { title: string; series: Array<{ label: string; values: number[]; color: string }>; label: string }): string {
  const all = options.series.flatMap((series) => series.values);
  const low = all.length ? Math.min(...all) : 0;
  const high = all.length ? Math.max(...all) : 1;
  const bins = high - low + 1;
  const counts = options.series.map((series) => {
    const list = new Array<number>(bins).fill(0);
    for (const value of series.values) list[value - low] = (list[value - low] as number) + 1;
    return list;
  });
  const maximum = Math.ceil(Math.max(1, ...counts.flat()) / 4) * 4;
  const size = { width: WIDTH, height: HEIGHT };
  const { y, body: axisBody } = axis(maximum, size);
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const binWidth = plotWidth / bins;
  let body = axisBody;
  counts.forEach((list, seriesIndex) => {
    const series = options.series[seriesIndex] as (typeof options.series)[number];
    const width = (binWidth * 0.85) / counts.length;
    list.forEach((count, bin) => {
      const x = MARGIN.left + bin * binWidth + binWidth * 0.075 + seriesIndex * width;
      body += `<rect class="bar" x="${x.toFixed(1)}" y="${y(count).toFixed(1)}" width="${width.toFixed(1)}" height="${(y(0) - y(count)).toFixed(1)}" fill="${series.color}"><title>${escapeXml(`${series.label}: ${count} episodes with ${low + bin} turns`)}</title></rect>`;
    });
  });
  const step = Math.max(1, Math.ceil(bins / 12));
  for (let bin = 0; bin < bins; bin += step)
    body += `<text x="${(MARGIN.left + (bin + 0.5) * binWidth).toFixed(1)}" y="${HEIGHT - MARGIN.bottom + 14}" text-anchor="middle" class="tick">${low + bin}</text>`;
  body += `<text x="${MARGIN.left + plotWidth / 2}" y="${HEIGHT - 8}" text-anchor="middle" class="tick">turns</text>`;
  return frame(options.title, body, options.label, size, maximum);
}
