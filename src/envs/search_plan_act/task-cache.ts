import type { RecordView } from "./record-view.ts";
import type { RecordSearchIndex, SearchBasis } from "./search-index.ts";
import type { SearchPlanTask } from "./task.ts";
import type { WorldRecord } from "./world.ts";

/**
 * What every episode of one task shares, computed on first use: the search basis and the index of the
 * initial records, the views of the initial records and the honest solver's plan length.
 *
 * It hangs off the task object under a symbol, not in a WeakMap keyed by the task: a task lives for a
 * few episodes, and WeakMap entries for short-lived keys are ephemerons, which the garbage collector
 * processes on every collection. Measured on search_plan_ood (generate, start, one search): 1,040–1,060 µs of
 * CPU per task with the index in a WeakMap against 565 µs without. The property is not enumerable, so
 * JSON, structured clones and object spreads leave it behind; a copy of the task builds its own.
 */
export interface TaskCache {
  /** The records the cache was built for: a task whose `records` were replaced gets a new cache. */
  readonly records: readonly WorldRecord[];
  basis: SearchBasis | null;
  index: RecordSearchIndex | null;
  /** Views of the task's own (initial) record objects; an episode keeps views of its changed copies itself. */
  readonly views: Map<WorldRecord, RecordView>;
  /** Tool calls of the honest solver (undefined until measured). */
  planCalls: number | undefined;
}

const CACHE = Symbol("search_plan task cache");

type Holder = SearchPlanTask & { [CACHE]?: TaskCache };

export function taskCache(task: SearchPlanTask): TaskCache {
  const holder = task as Holder;
  let cache = holder[CACHE];
  if (cache === undefined || cache.records !== task.records) {
    cache = { records: task.records, basis: null, index: null, views: new Map(), planCalls: undefined };
    Object.defineProperty(holder, CACHE, { value: cache, enumerable: false, writable: true, configurable: true });
  }
  return cache;
}
