import { createHash } from "node:crypto";
import { PythonFloat, pythonJsonDumps, type PythonDumpsOptions } from "../../python-semantics/index.ts";

/**
 * Copy-on-write database for one episode. The loaded database is deep-frozen and shared by every episode;
 * an episode copies only the nodes on the path to what it changes (`writable`), so 1,000 concurrent
 * episodes hold one database plus their own few changed orders/users.
 */
export type Node = Record<string, unknown> | unknown[] | Map<string, unknown>;

/** Freezes a loaded DB; `Map`s cannot be frozen inside, so the kit never calls `set` on a shared one. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    const children = value instanceof Map ? [...value.values()] : Object.values(value as object);
    for (const child of children) deepFreeze(child);
  }
  return value;
}

function copyNode(node: Node): Node {
  if (Array.isArray(node)) return [...node];
  if (node instanceof Map) return new Map(node);
  return { ...node };
}

function childOf(node: Node, key: string): unknown {
  return node instanceof Map ? node.get(key) : (node as Record<string, unknown>)[key];
}

function setChild(node: Node, key: string, value: unknown): void {
  if (node instanceof Map) node.set(key, value);
  else (node as Record<string, unknown>)[key] = value;
}

export class CowStore {
  private readonly owned = new WeakSet<object>();
  root: Record<string, unknown>;

  constructor(base: Record<string, unknown>) {
    this.root = base;
  }

  /** Copies (once per episode) every shared node from the root down to `path` and returns the last one. */
  writable<T extends Node = Record<string, unknown>>(path: readonly string[]): T {
    if (!this.owned.has(this.root)) this.root = this.own({ ...this.root });
    let node: Node = this.root;
    for (const key of path) {
      const child = childOf(node, key) as Node;
      if (child === null || typeof child !== "object") throw new Error(`no object at '${key}'`);
      if (!this.owned.has(child)) setChild(node, key, this.own(copyNode(child)));
      node = childOf(node, key) as Node;
    }
    return node as T;
  }

  /** Marks a freshly built object (e.g. a new order) as this episode's own. */
  own<T extends object>(value: T): T {
    this.owned.add(value);
    return value;
  }

  /** Replaces the whole root (tau2's `update_db` builds a new database instance). */
  replaceRoot(root: Record<string, unknown>): void {
    this.root = root;
  }
}

/**
 * tau2's DB hash: sha256 of `json.dumps(db.model_dump(), sort_keys=True, default=str)`. Frozen (shared)
 * subtrees never change, so their serialisation is cached; an episode re-serialises only its copies.
 */
export class DbHasher {
  private readonly cache = new WeakMap<object, string>();

  constructor(private readonly options: PythonDumpsOptions) {}

  hash(root: unknown): string {
    return createHash("sha256").update(this.dump(root, false), "utf8").digest("hex");
  }

  /**
   * Whether two DBs dump to the same text, without building it: shared (identical) subtrees are equal
   * at once, so comparing two episodes of one base costs only their changed paths. Equal dumps are
   * exactly equal hashes, which is all tau2's DB check compares.
   */
  equal(left: unknown, right: unknown, asFloat = false): boolean {
    if (left === right) return true;
    const isNode = (value: unknown) => value !== null && typeof value === "object" && !(value instanceof PythonFloat);
    if (!isNode(left) || !isNode(right)) return this.dump(left, asFloat) === this.dump(right, asFloat);
    if (Array.isArray(left) || Array.isArray(right)) {
      if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
      return left.every((item, index) => this.equal(item, right[index], asFloat));
    }
    const leftEntries = left instanceof Map ? new Map(left) : new Map(Object.entries(left as Record<string, unknown>));
    const rightEntries = right instanceof Map ? right : new Map(Object.entries(right as Record<string, unknown>));
    if (leftEntries.size !== rightEntries.size) return false;
    for (const [key, value] of leftEntries) {
      if (!rightEntries.has(key) || !this.equal(value, rightEntries.get(key), this.options.floatKeys?.has(key) ?? false)) return false;
    }
    return true;
  }

  dump(value: unknown, asFloat: boolean): string {
    if (value === null || typeof value !== "object" || value instanceof PythonFloat) {
      return pythonJsonDumps(asFloat && typeof value === "number" ? new PythonFloat(value) : value, { ...this.options, ensureAscii: true });
    }
    const frozen = Object.isFrozen(value);
    if (frozen) {
      const cached = this.cache.get(value);
      if (cached !== undefined) return cached;
    }
    let text: string;
    if (Array.isArray(value)) {
      text = value.length === 0 ? "[]" : `[${value.map((item) => this.dump(item, asFloat)).join(", ")}]`;
    } else {
      const entries = value instanceof Map ? [...value.entries()] : Object.entries(value as Record<string, unknown>);
      entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      text =
        entries.length === 0
          ? "{}"
          : `{${entries.map(([key, item]) => `${pythonJsonDumps(key, { ensureAscii: true })}: ${this.dump(item, this.options.floatKeys?.has(key) ?? false)}`).join(", ")}}`;
    }
    if (frozen) this.cache.set(value, text);
    return text;
  }
}
