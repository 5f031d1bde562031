import cliProgress from "cli-progress";

/** Progress of one run: episodes done, rate, ETA and errors, drawn by cli-progress on the caller's stream. */
export interface Progress {
  tick(options?: { errored?: boolean }): void;
  stop(): void;
}

/** What the bar draws on: a terminal (redrawn in place when `isTTY`), a log, or a test's memory stream. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** The widest bar; a narrow terminal gets a shorter one (or none) before the numbers are cut. */
const BAR_WIDTH = 24;

/**
 * One progress line that fits `columns` (80 when unknown, e.g. a log): the counts, rate, ETA and errors
 * always show; the bar shrinks first, then the label is cut with "…".
 */
export function progressLine(state: {
  label: string;
  value: number;
  total: number;
  rate: number;
  eta: string;
  errored: number;
  /** Failed model-call attempts so far (each retried or ending its episode); shown once there is one. */
  retries?: number;
  columns?: number | undefined;
}): string {
  const columns = Math.max(40, state.columns ?? 80) - 1; // the last column would wrap on some terminals
  const retries = state.retries ? `  retries ${state.retries}` : "";
  const numbers = `${state.value}/${state.total}  ${state.rate.toFixed(1)} ep/s  ETA ${state.eta}  errors ${state.errored}${retries}`;
  const room = columns - numbers.length - 1;
  const label = state.label.length + 1 <= room ? state.label : `${state.label.slice(0, Math.max(0, room - 2))}…`;
  const barWidth = Math.min(BAR_WIDTH, room - label.length - 1);
  if (barWidth < 5) return `${label} ${numbers}`;
  const filled = state.total > 0 ? Math.round((Math.min(state.value, state.total) / state.total) * barWidth) : 0;
  return `${label} ${"█".repeat(filled)}${"░".repeat(barWidth - filled)} ${numbers}`;
}

const SILENT: Progress = { tick: () => undefined, stop: () => undefined };

/**
 * A progress bar on `stream` (nothing without one). On a terminal it redraws in place; elsewhere (a log
 * file, CI) it prints a line every few seconds. The rate and ETA count only the episodes of this
 * process (a resumed run starts at `initial`), and the ETA reads "…" until the first episode is done
 * instead of a made-up number.
 */
export function createProgress(options: {
  label: string;
  total: number;
  stream?: ProgressStream;
  initial?: number;
  /** Failed model-call attempts so far, read at each redraw (a hung server shows its retries before any episode ends). */
  retries?: () => number;
}): Progress {
  if (!options.stream) return SILENT;
  const initial = options.initial ?? 0;
  const started = Date.now();
  let errored = 0;
  const bar = new cliProgress.SingleBar({
    // cli-progress writes with write() and, on a terminal, readline's cursor functions (which also only call write).
    stream: options.stream as NodeJS.WriteStream,
    noTTYOutput: true,
    notTTYSchedule: 2000,
    fps: 10,
    barsize: 24,
    hideCursor: false,
    linewrap: true,
    barCompleteChar: "█",
    barIncompleteChar: "░",
    autopadding: false,
    // The rate over the whole run so far: steadier than cli-progress's window of recent updates when
    // episodes finish in bursts (lines written in one batch arrive in the same millisecond).
    format: (barOptions, params) => {
      const done = params.value - initial;
      const seconds = (Date.now() - started) / 1000;
      const rate = seconds > 0 ? done / seconds : 0;
      const eta = done > 0 && rate > 0 ? cliProgress.Format.TimeFormat(Math.ceil((params.total - params.value) / rate), barOptions, 1) : "…";
      const retries = options.retries?.() ?? 0;
      return progressLine({ label: options.label, value: params.value, total: params.total, rate, eta, errored, retries, columns: options.stream?.columns });
    },
  });
  bar.start(options.total, initial);
  return {
    tick(tickOptions) {
      if (tickOptions?.errored) errored++;
      bar.increment();
    },
    stop() {
      bar.stop();
    },
  };
}
