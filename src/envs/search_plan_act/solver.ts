import type { ToolResult } from "../../core/index.ts";
import type { Chain, Descriptor, Goal, SearchPlanTask } from "./task.ts";

/** One tool call of the honest solver. */
export interface SolverCall {
  name: string;
  arguments: Record<string, unknown>;
}

interface Hit {
  id: string;
}
interface ReadResult {
  id: string;
  name: string;
  fields: Record<string, string | number>;
  links: Array<{ relation: string; target_id: string }>;
}
interface SearchResult {
  hits?: Hit[];
  next_offset?: number;
}

type Solver<T> = Generator<SolverCall, T, unknown>;

/**
 * The honest solver behind the oracle: it uses the hidden plan only to decide what to look for
 * (which name to search, which link to follow); every id and value it uses comes from a tool result.
 * A generator: it yields tool calls and receives each call's parsed JSON result.
 */
export function* solveTask(task: SearchPlanTask): Solver<void> {
  const cache = new Map<string, ReadResult>();
  const searches = new Map<string, SearchResult>();

  function* search(args: Record<string, unknown>): Solver<SearchResult> {
    const key = JSON.stringify(args);
    const cached = searches.get(key);
    if (cached) return cached;
    const result = (yield { name: "search", arguments: args }) as SearchResult;
    searches.set(key, result);
    return result;
  }

  function* read(id: string): Solver<ReadResult | null> {
    const cached = cache.get(id);
    if (cached) return cached;
    const result = (yield { name: "read_record", arguments: { id } }) as ReadResult;
    if (!result || typeof result !== "object" || !("fields" in result)) return null;
    cache.set(id, result);
    return result;
  }

  function* find(descriptor: Descriptor): Solver<string | null> {
    if (descriptor.by === "missing") {
      yield* search({ query: descriptor.name, type: descriptor.type });
      return null;
    }
    if (descriptor.by === "attribute") {
      for (let offset = 0; ; offset += 10) {
        const result = yield* search({ query: descriptor.word, type: descriptor.type, limit: 10, ...(offset > 0 ? { offset } : {}) });
        const hit = result?.hits?.find((candidate) => candidate.id === descriptor.id);
        if (hit) return hit.id;
        if (result?.next_offset === undefined) return null;
      }
    }
    const query = descriptor.by === "name" ? descriptor.name : descriptor.code;
    const result = yield* search({ query, type: descriptor.type });
    return result?.hits?.find((candidate) => candidate.id === descriptor.id)?.id ?? null;
  }

  function* resolve(chain: Chain): Solver<string | null> {
    let id = yield* find(chain.start);
    for (let step = 0; id !== null && step < chain.relations.length; step++) {
      const record = yield* read(id);
      const expected = chain.ids[step + 1];
      const link = record?.links.find(
        (candidate) => candidate.relation === chain.relations[step] && (expected === undefined || candidate.target_id === expected),
      );
      id = link ? link.target_id : null;
    }
    return id;
  }

  let answer: string | undefined;
  for (const goal of task.goals as Goal[]) {
    switch (goal.kind) {
      case "lookup": {
        const id = yield* resolve(goal.chain);
        const record = id ? yield* read(id) : null;
        if (record) answer = goal.field === null ? record.name : String(record.fields[goal.field]);
        break;
      }
      case "update": {
        const id = yield* resolve(goal.chain);
        if (id) yield { name: "update_record", arguments: { id, field: goal.field, value: goal.value } };
        break;
      }
      case "link": {
        const source = yield* resolve(goal.source);
        const target = yield* resolve(goal.target);
        if (source && target) yield { name: "link_records", arguments: { source_id: source, relation: goal.relation, target_id: target } };
        break;
      }
      case "copy": {
        const from = yield* resolve(goal.from);
        const record = from ? yield* read(from) : null;
        const to = yield* resolve(goal.to);
        if (record && to) yield { name: "update_record", arguments: { id: to, field: goal.toField, value: record.fields[goal.fromField] } };
        break;
      }
      case "conditional": {
        const id = yield* resolve(goal.chain);
        const record = id ? yield* read(id) : null;
        if (record && id) {
          const observed = Number(record.fields[goal.testField]);
          yield { name: "update_record", arguments: { id, field: goal.field, value: observed > goal.threshold ? goal.thenValue : goal.elseValue } };
        }
        break;
      }
      case "impossible":
        yield* resolve(goal.chain);
        break;
    }
  }
  yield { name: "finish", arguments: { status: task.status, ...(answer !== undefined ? { answer } : {}) } };
}

/** Runs the solver against a tool executor; returns the calls it made (the plan, finish included). */
export function runSolver(task: SearchPlanTask, execute: (name: string, args: Record<string, unknown>) => ToolResult): Array<SolverCall & { result: string }> {
  const calls: Array<SolverCall & { result: string }> = [];
  const solver = solveTask(task);
  let step = solver.next();
  while (!step.done) {
    const call = step.value;
    const result = execute(call.name, call.arguments);
    calls.push({ ...call, result: result.content });
    if (result.done) break;
    step = solver.next(JSON.parse(result.content));
  }
  return calls;
}
