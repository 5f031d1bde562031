// A node:test reporter for scripts/run-tests.mjs: one line per test file, "SECONDS<TAB>FILE", the sum of its
// top-level tests' durations (node reports no event for a whole file). `npm test` prints the slowest, so the
// long files that scripts/run-tests.mjs starts first can be kept in step with what takes long.
export default async function* fileDurations(source) {
  const seconds = new Map();
  for await (const event of source) {
    if ((event.type !== "test:pass" && event.type !== "test:fail") || event.data.nesting !== 0 || !event.data.file) continue;
    seconds.set(event.data.file, (seconds.get(event.data.file) ?? 0) + (event.data.details?.duration_ms ?? 0) / 1000);
  }
  for (const [file, total] of seconds) yield `${total.toFixed(1)}\t${file}\n`;
}
