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

const SILENT: Progress = { tick: () => undefined, stop: () => undefined };

/**
 * A progress bar on `stream` (nothing without one). On a terminal it redraws in place; elsewhere (a log
 * file, CI) it prints a line every few seconds. The rate and ETA count only the episodes of this
 * process (a resumed run starts at `initial`), and the ETA reads "…" until the first episode is done
 * instead of a made-up number.
 */
export function createProgress(options: { label: string; total: number; stream?: ProgressStream; initial?: number }): Progress {
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
      const bar = cliProgress.Format.BarFormat(params.progress, barOptions);
      return `${options.label} ${bar} ${params.value}/${params.total}  ${rate.toFixed(1)} ep/s  ETA ${eta}  errors ${errored}`;
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
