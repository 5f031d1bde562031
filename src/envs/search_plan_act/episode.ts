import {
  toolError,
  toolResult,
  type Episode,
  type JsonValue,
  type Message,
  type RejectedCall,
  type RewardBreakdown,
  type TerminationReason,
  type ToolResult,
} from "../../core/index.ts";
import { computeReward, episodeDiagnostics } from "./reward.ts";
import { runSolver } from "./solver.ts";
import { recordView, type RecordView } from "./record-view.ts";
import { RecordSearchIndex, SearchBasis } from "./search-index.ts";
import { taskCache, type TaskCache } from "./task-cache.ts";
import { normalizeValue, type SearchPlanTask } from "./task.ts";
import type { Theme, TypeSpec } from "./themes.ts";
import { SEARCH_PLAN_TOOLS, SEARCH_PLAN_VALIDATORS } from "./tools.ts";
import type { FieldValue, WorldRecord } from "./world.ts";

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Everything the reward needs to know about what happened in an episode (format errors are the episode
 * driver's ledger, handed to `reward` and `diagnostics`).
 */
export interface EpisodeLedger {
  /** Tool calls except finish, refused ones included: each costs against the call budget. */
  calls: number;
  callsByName: Record<string, number>;
  searches: number;
  repeatedCalls: number;
  references: number;
  ungrounded: string[];
  /** `id.field` → whether the value last written there was grounded. */
  groundedWrites: Map<string, boolean>;
  finish: { status: string; answer: string | null; answerGrounded: boolean } | null;
}

/**
 * One running search_plan episode: the world state (copy-on-write over the task's records), the
 * tools, and the ledger of observations (for grounding) and calls (for stop behaviour).
 */
export class SearchPlanEpisode implements Episode {
  readonly protocol = "tools" as const;
  readonly tools = SEARCH_PLAN_TOOLS;
  readonly validators = SEARCH_PLAN_VALIDATORS;
  readonly ledger: EpisodeLedger = {
    calls: 0,
    callsByName: {},
    searches: 0,
    repeatedCalls: 0,
    references: 0,
    ungrounded: [],
    groundedWrites: new Map(),
    finish: null,
  };
  readonly initial = new Map<string, WorldRecord>();
  readonly current = new Map<string, WorldRecord>();
  private readonly mutated = new Set<string>();
  private readonly types = new Map<string, TypeSpec>();
  private readonly observedIds = new Set<string>();
  private readonly observedValues = new Set<string>();
  private readonly statedValues: Set<string>;
  private readonly previousCalls = new Set<string>();
  private searchIndex: RecordSearchIndex | null = null;
  private order: WorldRecord[];
  /** What the task's episodes share (the initial search index and record views, the plan length). */
  private readonly shared: TaskCache;
  /** Views of this episode's changed copies of records (the initial records' views are shared). */
  private readonly ownViews = new Map<WorldRecord, RecordView>();

  constructor(
    readonly task: SearchPlanTask,
    readonly theme: Theme,
    readonly messages: Message[],
    private readonly slack: number,
  ) {
    for (const record of task.records) {
      this.initial.set(record.id, record);
      this.current.set(record.id, record);
    }
    for (const type of theme.types) this.types.set(type.name, type);
    this.order = task.records;
    this.statedValues = new Set(task.statedValues);
    this.shared = taskCache(task);
  }

  get done(): boolean {
    return this.ledger.finish !== null;
  }

  /** A call the driver accepted: `args` passed `SEARCH_PLAN_VALIDATORS`. */
  call(name: string, args: unknown): ToolResult {
    if (this.count(name)) return toolError("after_finish", "the episode has already finished");
    const input = args as Record<string, unknown>;
    switch (name) {
      case "search":
        return this.search(input);
      case "read_record":
        return this.read(input.id as string);
      case "update_record":
        return this.update(input.id as string, input.field as string, input.value as FieldValue);
      case "link_records":
        return this.link(input.source_id as string, input.relation as string, input.target_id as string);
      default:
        return this.finish(input.status as string, input.answer as string | undefined);
    }
  }

  /** A refused call still counts against the call budget; the driver answers it. */
  rejected(call: RejectedCall): undefined {
    this.count(call.name);
    return undefined;
  }

  /** Counts a call; true when the episode had already finished. */
  private count(name: string): boolean {
    const ledger = this.ledger;
    ledger.callsByName[name] = (ledger.callsByName[name] ?? 0) + 1;
    if (ledger.finish) return true;
    if (name !== "finish") ledger.calls++;
    return false;
  }

  private repeated(key: string): void {
    if (this.previousCalls.has(key)) this.ledger.repeatedCalls++;
    else this.previousCalls.add(key);
  }

  private readonly lookup = (id: string): WorldRecord => this.current.get(id) as WorldRecord;

  /** Grounds the record's id, its name and its first `fieldLimit` field values. */
  private observeRecord(record: WorldRecord, fieldLimit: number): RecordView {
    const views = this.initial.get(record.id) === record ? this.shared.views : this.ownViews;
    const view = recordView(record, this.lookup, views);
    this.observedIds.add(record.id);
    const values = view.values;
    const end = Math.min(values.length, fieldLimit + 1);
    for (let position = 0; position < end; position++) this.observedValues.add(values[position] as string);
    return view;
  }

  private reference(kind: "id" | "value", value: string, grounded: boolean): boolean {
    this.ledger.references++;
    if (!grounded) this.ledger.ungrounded.push(`${kind}:${value}`.slice(0, 80));
    return grounded;
  }

  private referenceId(id: string): boolean {
    return this.reference("id", id, this.observedIds.has(id));
  }

  private search(input: Record<string, unknown>): ToolResult {
    const query = (input.query as string).trim();
    const limit = (input.limit as number | undefined) ?? 5;
    const offset = (input.offset as number | undefined) ?? 0;
    const type = input.type as string | undefined;
    if (type !== undefined && !this.types.has(type))
      return toolError("unknown_type", `search: unknown type '${type}'; record types: ${[...this.types.keys()].join(", ")}`);
    this.ledger.searches++;
    this.repeated(`s\u0000${query}\u0000${type}\u0000${limit}\u0000${offset}`);
    if (!this.searchIndex) {
      const shared = this.shared;
      const basis = (shared.basis ??= new SearchBasis(this.task.records, this.theme));
      if (this.mutated.size === 0) {
        this.order = this.task.records;
        this.searchIndex = shared.index ??= new RecordSearchIndex(basis, this.order, []);
      } else {
        const changed: number[] = [];
        this.order = this.task.records.map((original, position) => {
          const record = this.current.get(original.id) as WorldRecord;
          if (record !== original) changed.push(position);
          return record;
        });
        this.searchIndex = new RecordSearchIndex(basis, this.order, changed);
      }
    }
    const positions = this.searchIndex.search(query, type);
    if (positions.length === 0) return toolResult({ hits: [], note: "no records match" });
    const page = positions.slice(offset, offset + limit);
    if (page.length === 0) return toolResult({ hits: [], total: positions.length, offset, note: `no more hits; there are ${positions.length}` });
    const hits = page.map((position) => {
      const record = this.current.get((this.order[position] as WorldRecord).id) as WorldRecord;
      const { snippet } = this.observeRecord(record, 2);
      return { id: record.id, type: record.type, name: record.name, snippet };
    });
    const next = offset + limit < positions.length ? { next_offset: offset + limit } : {};
    return toolResult({ hits, total: positions.length, offset, ...next });
  }

  private unknownId(tool: string, id: string): ToolResult {
    return toolError(
      "unknown_id",
      `${tool}: no record has id '${id}'; use an id from search results or links (ids look like ${this.theme.types[0]?.prefix}-0192)`,
    );
  }

  private read(id: string): ToolResult {
    this.referenceId(id);
    this.repeated(`r\u0000${id}`);
    const record = this.current.get(id);
    if (!record) return this.unknownId("read_record", id);
    const view = this.observeRecord(record, Infinity);
    const { linkIds, linkNames } = view;
    for (let position = 0; position < linkIds.length; position++) {
      this.observedIds.add(linkIds[position] as string);
      this.observedValues.add(linkNames[position] as string);
    }
    return { content: view.content, isError: false, done: false };
  }

  private writable(id: string): WorldRecord {
    let record = this.current.get(id) as WorldRecord;
    if (!this.mutated.has(id)) {
      record = { ...record, fields: { ...record.fields }, links: [...record.links] };
      this.current.set(id, record);
      this.mutated.add(id);
    }
    this.searchIndex = null;
    this.previousCalls.clear();
    return record;
  }

  private update(id: string, field: string, value: FieldValue): ToolResult {
    this.referenceId(id);
    const record = this.current.get(id);
    if (!record) return this.unknownId("update_record", id);
    const type = this.types.get(record.type) as TypeSpec;
    const spec = type.fields.find((candidate) => candidate.name === field);
    if (!spec)
      return toolError(
        "unknown_field",
        `update_record: a ${record.type} has no field '${field}'; fields: ${type.fields.map((candidate) => candidate.name).join(", ")}`,
      );
    if (spec.readOnly) return toolError("read_only_field", `update_record: field '${field}' of a ${record.type} is read-only`);
    let coerced: FieldValue | null = null;
    if (spec.kind === "integer" || spec.kind === "money") {
      const number = typeof value === "number" ? value : /^\s*\$?-?[\d,]*\d(\.\d+)?\s*$/.test(value) ? Number(value.replace(/[$,\s]/g, "")) : NaN;
      if (Number.isFinite(number) && (spec.kind === "money" || Number.isInteger(number))) coerced = number;
      if (coerced === null)
        return toolError(
          "wrong_type",
          `update_record: field '${field}' is ${spec.kind === "integer" ? "an integer" : "a money amount"}; pass a number, got ${JSON.stringify(value)}`,
        );
    } else if (spec.kind === "date") {
      const match = typeof value === "string" ? DATE.exec(value.trim()) : null;
      if (!match || Number(match[2]) < 1 || Number(match[2]) > 12 || Number(match[3]) < 1 || Number(match[3]) > 31)
        return toolError("wrong_type", `update_record: field '${field}' is a date; pass YYYY-MM-DD, got ${JSON.stringify(value)}`);
      coerced = value as string;
    } else if (spec.kind === "enum") {
      if (typeof value !== "string" || !spec.values?.includes(value))
        return toolError("enum_violation", `update_record: ${JSON.stringify(value)} is not allowed for '${field}'; allowed values: ${spec.values?.join(", ")}`);
      coerced = value;
    } else {
      if (typeof value !== "string" || value.trim() === "")
        return toolError("wrong_type", `update_record: field '${field}' is text; pass a non-empty string, got ${JSON.stringify(value)}`);
      coerced = value.trim();
    }
    const normalized = normalizeValue(coerced);
    const grounded = this.reference("value", normalized, this.observedValues.has(normalized) || this.statedValues.has(normalized));
    const target = this.writable(id);
    const previous = target.fields[field] as FieldValue;
    target.fields[field] = coerced;
    this.ownViews.delete(target);
    this.ledger.groundedWrites.set(`${id}.${field}`, grounded);
    this.observedValues.add(normalized);
    return toolResult({ ok: true, id, field, previous, current: coerced });
  }

  private link(sourceId: string, relation: string, targetId: string): ToolResult {
    this.referenceId(sourceId);
    this.referenceId(targetId);
    const source = this.current.get(sourceId);
    if (!source) return this.unknownId("link_records", sourceId);
    const target = this.current.get(targetId);
    if (!target) return this.unknownId("link_records", targetId);
    const allowed = this.theme.relations
      .filter((candidate) => !candidate.functional && candidate.from === source.type && candidate.to === target.type)
      .map((candidate) => candidate.name);
    if (!allowed.includes(relation)) {
      const structural = this.theme.relations.some((candidate) => candidate.functional && candidate.name === relation && candidate.from === source.type);
      const why = structural
        ? `'${relation}' is a structural link (exactly one per ${source.type}) and cannot be added`
        : `relation '${relation}' is not allowed from a ${source.type} to a ${target.type}`;
      return toolError(
        "relation_not_allowed",
        `link_records: ${why}; relations you can add from a ${source.type} to a ${target.type}: ${allowed.length ? allowed.join(", ") : "none"}`,
      );
    }
    if (sourceId === targetId) return toolError("relation_not_allowed", "link_records: a record cannot be linked to itself");
    if (source.links.some((link) => link.relation === relation && link.target === targetId))
      return toolError("duplicate_link", `link_records: ${sourceId} -[${relation}]-> ${targetId} already exists`);
    const writable = this.writable(sourceId);
    writable.links.push({ relation, target: targetId });
    this.ownViews.delete(writable);
    return toolResult({ ok: true, source_id: sourceId, relation, target_id: targetId });
  }

  private finish(status: string, answer: string | undefined): ToolResult {
    let answerGrounded = false;
    if (answer !== undefined) {
      const normalized = normalizeValue(answer);
      answerGrounded = this.reference("value", normalized, this.observedValues.has(normalized));
    }
    this.ledger.finish = { status, answer: answer ?? null, answerGrounded };
    return toolResult({ ok: true, status }, { done: true });
  }

  /** Records whose final state differs from the initial one. */
  mutatedRecords(): Array<{ before: WorldRecord; after: WorldRecord }> {
    return [...this.mutated].sort().map((id) => ({ before: this.initial.get(id) as WorldRecord, after: this.current.get(id) as WorldRecord }));
  }

  /** Tool calls (finish included) the honest solver needs for this task, measured by running it. */
  planCalls(): number {
    let length = this.shared.planCalls;
    if (length === undefined) {
      const dryRun = new SearchPlanEpisode(this.task, this.theme, this.messages, this.slack);
      length = this.shared.planCalls = runSolver(this.task, (name, args) => dryRun.call(name, args)).length;
    }
    return length;
  }

  reward(options: { turnsUsed: number; maxTurns: number; endedBy: TerminationReason; formatErrors?: number }): RewardBreakdown {
    return computeReward({ episode: this, slack: this.slack, planCalls: this.planCalls(), ...options });
  }

  diagnostics(ledger?: { formatErrors: number }): Record<string, JsonValue> {
    return episodeDiagnostics(this, ledger);
  }
}
