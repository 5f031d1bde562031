import { setMaxListeners } from "node:events";

/**
 * Runs `work(item, signal)` for every item with at most `concurrency` calls in flight. Items are taken
 * from `items` one at a time as calls finish, so the pool holds `concurrency` calls whatever the number
 * of items (a generator of a million episodes costs no more memory than one of ten). When one call
 * throws, the others are cancelled: items not started yet are skipped, running calls see `signal`
 * aborted, and the pool waits until every started call has settled before it rethrows the first error,
 * so what the calls share (an open results file) is never closed under one of them. An abort of the
 * caller's `signal` cancels the same way, without an error.
 */
export async function runPool<T>(
  items: Iterable<T>,
  options: { concurrency: number; signal?: AbortSignal },
  work: (item: T, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const controller = new AbortController();
  // Every call in flight listens on it (hundreds at high concurrency): not a leak.
  setMaxListeners(0, controller.signal);
  const outer = options.signal;
  const cancel = () => controller.abort(outer?.reason);
  if (outer?.aborted) cancel();
  else outer?.addEventListener("abort", cancel, { once: true });
  let failure: { error: unknown } | undefined;
  const iterator = items[Symbol.iterator]();
  let exhausted = false;
  const next = (): { item: T } | undefined => {
    if (exhausted || controller.signal.aborted) return undefined;
    const step = iterator.next();
    if (step.done) exhausted = true;
    return step.done ? undefined : { item: step.value };
  };
  const runner = async () => {
    for (let entry = next(); entry; entry = next()) {
      try {
        await work(entry.item, controller.signal);
      } catch (error) {
        if (failure) continue;
        failure = { error };
        controller.abort(error);
      }
    }
  };
  try {
    // The runners never reject (failures are caught above), so this waits for every started call.
    await Promise.all(Array.from({ length: Math.max(1, Math.floor(options.concurrency)) }, runner));
  } finally {
    outer?.removeEventListener("abort", cancel);
  }
  if (failure) throw failure.error;
}
