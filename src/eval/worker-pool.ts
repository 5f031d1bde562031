import { setMaxListeners } from "node:events";
import pLimit from "p-limit";

/**
 * Runs `work(item, signal)` for every item with at most `concurrency` calls in flight. When one call
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
  const limit = pLimit(Math.max(1, Math.floor(options.concurrency)));
  let failure: { error: unknown } | undefined;
  const calls: Array<Promise<void>> = [];
  for (const item of items) {
    calls.push(
      limit(async () => {
        if (controller.signal.aborted) return;
        try {
          await work(item, controller.signal);
        } catch (error) {
          if (failure) return;
          failure = { error };
          controller.abort(error);
        }
      }),
    );
  }
  try {
    // The calls never reject (failures are caught above), so this waits for every one of them.
    await Promise.all(calls);
  } finally {
    outer?.removeEventListener("abort", cancel);
  }
  if (failure) throw failure.error;
}
