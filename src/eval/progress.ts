/** A progress line on stderr: episodes done, rate, ETA, errors. Redraws in place on a TTY. */
export interface Progress {
  tick(options?: { errored?: boolean }): void;
  stop(): void;
}

export function createProgress(options: { label: string; total: number; stream?: NodeJS.WriteStream; quiet?: boolean; initial?: number }): Progress {
  const stream = options.stream ?? process.stderr;
  const started = Date.now();
  let done = options.initial ?? 0;
  const initial = done;
  let errored = 0;
  let lastDraw = 0;
  const isTty = Boolean(stream.isTTY);
  const draw = (final: boolean) => {
    if (options.quiet) return;
    const now = Date.now();
    if (!final && now - lastDraw < (isTty ? 100 : 2000)) return;
    lastDraw = now;
    const seconds = (now - started) / 1000;
    const rate = seconds > 0 ? (done - initial) / seconds : 0;
    const remaining = rate > 0 ? (options.total - done) / rate : 0;
    const width = 24;
    const filled = options.total > 0 ? Math.round((done / options.total) * width) : width;
    const bar = `${"█".repeat(filled)}${"░".repeat(width - filled)}`;
    const text = `${options.label} ${bar} ${done}/${options.total}  ${rate.toFixed(1)} ep/s  ETA ${remaining.toFixed(0)}s  errors ${errored}`;
    stream.write(isTty ? `\r${text}\x1b[K${final ? "\n" : ""}` : `${text}\n`);
  };
  return {
    tick(tickOptions) {
      done++;
      if (tickOptions?.errored) errored++;
      draw(done === options.total);
    },
    stop() {
      if (done !== options.total) draw(true);
    },
  };
}
