/**
 * The tokenizer of `bm25.ts`. `tokenize` is the definition: lowercase runs of Unicode letters and digits.
 * `TermBuilder` produces the same tokens as interned term ids, fast: ASCII text (nearly all text indexed
 * here) is encoded into a byte buffer once; a table-driven loop finds each letter/digit run, which is
 * hashed and compared four bytes at a time (ASCII letters and digits lowercase with `| 0x20`) in a hash
 * table that is reused by every build and sized to the build (a 10-document index stays in the L1 cache);
 * no string is made per token or per term. Text with other characters goes through `tokenize` one
 * separator-delimited segment at a time. A build's terms are kept as a `TermSet` (bytes + hashes).
 */

const termPattern = /[\p{L}\p{N}]+/gu;

/** Lowercase runs of letters and digits: "PX-44712 Oriveth" → ["px", "44712", "oriveth"]. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(termPattern) ?? [];
}

/** A document: one text, or fields that are tokenized as if joined by spaces (no joined copy is made). */
export type TermDocument = string | readonly string[];

/**
 * Character classes of the byte copy: TOKEN for an ASCII letter or digit; SKIP for the case-ignorable
 * punctuation ' . : ^ ` (Unicode Final_Sigma lowercasing looks through it, so it cannot end a segment)
 * and for NON_ASCII, which stands for any other character; SEPARATOR for every other ASCII character.
 * Lowercasing and `tokenize`'s letter/digit runs never look across a separator, so a segment holding
 * non-ASCII characters can be handed to `tokenize` on its own and gives the same tokens.
 */
const SEPARATOR = 0;
const SKIP = 1;
const TOKEN = 2;
const NON_ASCII = 128;
const CLASS = new Uint8Array(256);
for (const [first, last] of [
  [48, 57],
  [65, 90],
  [97, 122],
]) {
  for (let code = first as number; code <= (last as number); code++) CLASS[code] = TOKEN;
}
for (const character of "'.:^`") CLASS[character.charCodeAt(0)] = SKIP;
CLASS[NON_ASCII] = SKIP;

/** `| LOWER` lowercases four ASCII letters/digits at once (digits already have the 0x20 bit). */
const LOWER = 0x20202020;
/** Keeps the first 1, 2 or 3 bytes of a little-endian word. */
const TAIL_MASK = [0, 0xff, 0xffff, 0xffffff];

/** MurmurHash3 (x86, 32-bit) step and finalizer over little-endian words. */
function mix(hash: number, word: number): number {
  let k = Math.imul(word, 0xcc9e2d51);
  k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
  hash ^= k;
  hash = (hash << 13) | (hash >>> 19);
  return (Math.imul(hash, 5) + 0xe6546b64) | 0;
}

function finish(hash: number, length: number): number {
  hash ^= length;
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}

/** Hash of a term; for an ASCII term, the same words and steps as the run hashing in `appendAscii`. */
function hashOfTerm(term: string): number {
  let hash = 0;
  let word = 0;
  let ascii = true;
  for (let position = 0; position < term.length; position++) {
    const code = term.charCodeAt(position);
    if (code >= 128) ascii = false;
    word |= (code & 0xff) << (8 * (position & 3));
    if ((position & 3) === 3) {
      hash = mix(hash, word);
      word = 0;
    }
  }
  if (term.length & 3) hash = mix(hash, word);
  // Only ASCII terms must agree with `appendAscii`; others are salted so their high bytes still count.
  return ascii ? finish(hash, term.length) : finish(mix(hash, term.charCodeAt(0) ^ 0x5bd1e995), ~term.length);
}

function isAscii(term: string): boolean {
  for (let position = 0; position < term.length; position++) if (term.charCodeAt(position) >= 128) return false;
  return true;
}

/** Record layout, three ints per term: hash, start of its bytes in the pool, byte length (-1: not ASCII). */
const HASH = 0;
const START = 1;
const LENGTH = 2;

/** Sets with at most this many terms find a term by scanning their hashes; larger ones build a hash table on first use. */
const LINEAR_LOOKUP_TERMS = 16;

/** The distinct terms of one index, ids in order of first occurrence. */
export class TermSet {
  readonly size: number;
  private readonly records: Int32Array;
  private readonly pool: Uint8Array;
  /** Terms with non-ASCII characters (rare), by id. */
  private readonly others: ReadonlyMap<number, string> | undefined;
  /**
   * Open addressing by hash: id + 1 (0 = empty). Built by the first `find` (many indexes, one per
   * episode, are never searched).
   */
  private lookup: Int32Array | undefined;

  constructor(records: Int32Array, pool: Uint8Array, others: ReadonlyMap<number, string> | undefined) {
    this.records = records;
    this.pool = pool;
    this.others = others;
    this.size = records.length / 3;
  }

  private buildLookup(): Int32Array {
    let capacity = 16;
    while (capacity < this.size * 2) capacity *= 2;
    const lookup = new Int32Array(capacity);
    for (let id = 0; id < this.size; id++) {
      let slot = (this.records[3 * id + HASH] as number) & (capacity - 1);
      while (lookup[slot] !== 0) slot = (slot + 1) & (capacity - 1);
      lookup[slot] = id + 1;
    }
    return lookup;
  }

  /** Id of a lowercased term, or -1 when no document contains it. */
  find(term: string): number {
    const hash = hashOfTerm(term);
    if (this.size <= LINEAR_LOOKUP_TERMS) {
      for (let id = 0; id < this.size; id++) if (this.records[3 * id + HASH] === hash && this.matches(id, term)) return id;
      return -1;
    }
    const lookup = (this.lookup ??= this.buildLookup());
    const mask = lookup.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = lookup[slot] as number;
      if (entry === 0) return -1;
      if (this.records[3 * (entry - 1) + HASH] === hash && this.matches(entry - 1, term)) return entry - 1;
    }
  }

  /** The term with id `id`. */
  term(id: number): string {
    const length = this.records[3 * id + LENGTH] as number;
    if (length === -1) return this.others?.get(id) as string;
    const start = this.records[3 * id + START] as number;
    return String.fromCharCode(...this.pool.subarray(start, start + length));
  }

  private matches(id: number, term: string): boolean {
    const length = this.records[3 * id + LENGTH] as number;
    if (length === -1) return this.others?.get(id) === term;
    if (length !== term.length) return false;
    const start = this.records[3 * id + START] as number;
    for (let position = 0; position < length; position++) if (this.pool[start + position] !== term.charCodeAt(position)) return false;
    return true;
  }
}

/**
 * Tokenizes documents into build-local term ids in `ids[0, count)`, reusing all its buffers: one
 * instance serves every index in the process (builds are synchronous). `begin` starts a build, `scan`
 * tokenizes one document, `finish` hands over the build's terms as a `TermSet`.
 */
export class TermBuilder {
  ids = new Int32Array(4096);
  count = 0;
  /** Distinct terms of the current build so far. */
  terms = 0;
  private bytes = new Uint8Array(1 << 16);
  private view = new DataView(this.bytes.buffer);
  private readonly encoder = new TextEncoder();
  /** Two ints per slot: `stamp + id` (a value below `stamp` means empty), hash. Only the first `mask + 1` slots are in use. */
  private table = new Int32Array(2 * 4096);
  private mask = 0;
  private stamp = 0;
  private records = new Int32Array(3 * 1024);
  private pool = new Uint8Array(1 << 14);
  private poolView = new DataView(this.pool.buffer);
  private poolUsed = 0;
  private others: Map<number, string> | undefined;

  begin(): void {
    this.resetTable(2048); // before `terms` is cleared: the stamp must pass the last build's ids
    this.terms = 0;
    this.poolUsed = 0;
    this.others = undefined;
  }

  finish(): TermSet {
    return new TermSet(this.records.slice(0, 3 * this.terms), this.pool.slice(0, this.poolUsed), this.others);
  }

  /** Term ids of a document (fields in order), in `ids[0, count)`; returns `count`. */
  scan(document: TermDocument): number {
    this.count = 0;
    if (typeof document === "string") this.append(document);
    else for (let field = 0; field < document.length; field++) this.append(document[field] as string);
    return this.count;
  }

  /** Empties the table (by moving the stamp past every id written so far) and uses `slots` slots of it. */
  private resetTable(slots: number): void {
    if (this.stamp > 1 << 30) {
      this.table.fill(0);
      this.stamp = 0;
    }
    this.stamp += this.terms + 1;
    if (this.table.length < 2 * slots) this.table = new Int32Array(2 * slots);
    this.mask = slots - 1;
  }

  private grow(): void {
    this.resetTable(2 * (this.mask + 1));
    const { table, mask, stamp, records } = this;
    for (let id = 0; id < this.terms; id++) {
      const hash = records[3 * id + HASH] as number;
      let slot = hash & mask;
      while ((table[2 * slot] as number) >= stamp) slot = (slot + 1) & mask;
      table[2 * slot] = stamp + id;
      table[2 * slot + 1] = hash;
    }
  }

  private add(hash: number, slot: number, ascii: boolean, length: number): number {
    const id = this.terms++;
    this.table[2 * slot] = this.stamp + id;
    this.table[2 * slot + 1] = hash;
    if (this.records.length < 3 * this.terms) {
      const records = new Int32Array(this.records.length * 2);
      records.set(this.records);
      this.records = records;
    }
    this.records[3 * id + HASH] = hash;
    this.records[3 * id + START] = this.poolUsed;
    this.records[3 * id + LENGTH] = ascii ? length : -1;
    if (ascii && this.poolUsed + length + 4 > this.pool.length) {
      const pool = new Uint8Array(Math.max(this.pool.length * 2, this.poolUsed + length + 4));
      pool.set(this.pool);
      this.pool = pool;
      this.poolView = new DataView(pool.buffer);
    }
    if (2 * this.terms > this.mask + 1) this.grow();
    return id;
  }

  /** Id of a term from `tokenize` (lowercase; may hold any characters). */
  private internTerm(term: string): number {
    const hash = hashOfTerm(term);
    const ascii = isAscii(term);
    const { table, mask, stamp, records, pool } = this;
    let slot = hash & mask;
    for (let stamped = table[2 * slot] as number; stamped >= stamp; stamped = table[2 * slot] as number) {
      const id = stamped - stamp;
      if (table[2 * slot + 1] === hash) {
        const length = records[3 * id + LENGTH] as number;
        if (length === -1 ? this.others?.get(id) === term : ascii && length === term.length) {
          const start = records[3 * id + START] as number;
          let position = 0;
          while (length !== -1 && position < length && pool[start + position] === term.charCodeAt(position)) position++;
          if (length === -1 || position === length) return id;
        }
      }
      slot = (slot + 1) & mask;
    }
    const start = this.poolUsed;
    const id = this.add(hash, slot, ascii, term.length);
    if (ascii) {
      for (let position = 0; position < term.length; position++) this.pool[start + position] = term.charCodeAt(position);
      this.poolUsed += term.length;
    } else (this.others ??= new Map()).set(id, term);
    return id;
  }

  /** Adds the ASCII run bytes[start, end) (not yet in the table; `slot` is the empty slot its probe ended on). */
  private insertRun(start: number, end: number, hash: number, slot: number): number {
    const length = end - start;
    const poolStart = this.poolUsed;
    const id = this.add(hash, slot, true, length);
    // Whole words, lowercased; up to 3 bytes past the term are overwritten by the next one (the pool keeps 4 spare).
    const pool = this.poolView;
    const view = this.view;
    for (let position = 0; position < length; position += 4) pool.setUint32(poolStart + position, view.getUint32(start + position, true) | LOWER, true);
    this.poolUsed += length;
    return id;
  }

  private append(text: string): void {
    const length = text.length;
    // A text of n characters has at most n tokens (lowercasing may lengthen it: "İİ" → "i̇i̇" → i, i).
    if (this.ids.length < this.count + length + 1) {
      const ids = new Int32Array(Math.max(this.ids.length * 2, this.count + length + 1));
      ids.set(this.ids.subarray(0, this.count));
      this.ids = ids;
    }
    if (this.bytes.length < length + 4) {
      this.bytes = new Uint8Array(Math.max(length + 4, this.bytes.length * 2));
      this.view = new DataView(this.bytes.buffer);
    }
    const bytes = this.bytes;
    // Into the whole buffer (it holds `length` + 4 bytes): a subarray per text is an object per document,
    // 15% of indexing a 160-record world. A longer UTF-8 encoding spills past `length` and is redone below.
    const { read, written } = this.encoder.encodeInto(text, bytes);
    bytes[length] = SEPARATOR; // ends the last run
    // UTF-8 is one byte per character exactly when every character is ASCII.
    if (read === length && written === length) {
      this.appendAscii(0, length);
      return;
    }
    // Otherwise one byte per character again, NON_ASCII standing for any other character: runs of ASCII
    // segments are scanned in place, and each segment with other characters goes through `tokenize`.
    for (let position = 0; position < length; position++) {
      const code = text.charCodeAt(position);
      bytes[position] = code < 128 ? code : NON_ASCII;
    }
    let asciiStart = 0;
    let segmentStart = 0;
    let ascii = true;
    for (let position = 0; position <= length; position++) {
      const byte = bytes[position] as number;
      if (byte === NON_ASCII) ascii = false;
      else if (CLASS[byte] === SEPARATOR) {
        if (!ascii) {
          this.appendAscii(asciiStart, segmentStart);
          for (const term of tokenize(text.slice(segmentStart, position))) this.ids[this.count++] = this.internTerm(term);
          asciiStart = position;
          ascii = true;
        }
        segmentStart = position + 1;
      }
    }
    this.appendAscii(asciiStart, length);
  }

  /**
   * Appends the terms of bytes[start, end), ASCII codes followed by a non-letter. The hot loop of indexing:
   * finding a run, hashing it and finding it in the table are written out here rather than called.
   */
  private appendAscii(start: number, end: number): void {
    const bytes = this.bytes;
    const view = this.view;
    const ids = this.ids;
    let { table, mask, stamp, records, poolView } = this;
    let count = this.count;
    let position = start;
    while (position < end) {
      if (CLASS[bytes[position] as number] !== TOKEN) {
        position++;
        continue;
      }
      const runStart = position;
      do position++;
      while (CLASS[bytes[position] as number] === TOKEN);
      const length = position - runStart;
      let hash = 0;
      let word = runStart;
      for (; position - word >= 4; word += 4) hash = mix(hash, view.getUint32(word, true) | LOWER);
      const tail = TAIL_MASK[position - word] as number;
      const last = (view.getUint32(word, true) | LOWER) & tail;
      if (word < position) hash = mix(hash, last);
      hash = finish(hash, length);
      let slot = hash & mask;
      let id = -1;
      for (let stamped = table[2 * slot] as number; stamped >= stamp; slot = (slot + 1) & mask, stamped = table[2 * slot] as number) {
        if (table[2 * slot + 1] !== hash || records[3 * (stamped - stamp) + LENGTH] !== length) continue;
        const shift = (records[3 * (stamped - stamp) + START] as number) - runStart;
        let compared = runStart;
        while (compared < word && (view.getUint32(compared, true) | LOWER) === (poolView.getUint32(compared + shift, true) | 0)) compared += 4;
        if (compared === word && (word === position || last === (poolView.getUint32(word + shift, true) & tail))) {
          id = stamped - stamp;
          break;
        }
      }
      if (id === -1) {
        id = this.insertRun(runStart, position, hash, slot);
        ({ table, mask, stamp, records, poolView } = this);
      }
      ids[count++] = id;
    }
    this.count = count;
  }
}

/** The tokens an index sees in a document, through `TermBuilder` and a `TermSet` (for tests and diagnostics). */
export function indexedTokens(document: TermDocument): string[] {
  const builder = new TermBuilder();
  builder.begin();
  const count = builder.scan(document);
  const terms = builder.finish();
  return Array.from(builder.ids.subarray(0, count), (id) => terms.term(id));
}
