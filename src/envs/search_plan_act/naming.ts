import type { Random } from "../../core/index.ts";
import * as nameTables from "./names.ts";

/**
 * Unique record names for one world, fast. Every name is built from syllable tables, so its hash (a
 * polynomial over its characters, mod 2^32) is combined from the parts' precomputed hashes without
 * reading the new string; the set of names taken is an open-addressing table of those hashes, and
 * strings are compared only when two hashes meet. The random draws are exactly those of `givenName`,
 * `surname`, `wordName` and `nearDuplicate` (names.ts), in the same order.
 */
const BASE = 0x01000193;
const POWERS = new Int32Array(256);
POWERS[0] = 1;
for (let length = 1; length < POWERS.length; length++) POWERS[length] = Math.imul(POWERS[length - 1] as number, BASE);

/** BASE ** length, mod 2^32. */
function power(length: number): number {
  if (length < POWERS.length) return POWERS[length] as number;
  let result = POWERS[POWERS.length - 1] as number;
  for (let extra = length - POWERS.length + 1; extra > 0; extra--) result = Math.imul(result, BASE);
  return result;
}

export function hashText(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

/** The hash of `left + right` from the hash of each and the length of `right`. */
function join(left: number, right: number, rightLength: number): number {
  return (Math.imul(left, power(rightLength)) + right) | 0;
}

const SPACE = 32;
const hashesOf = (texts: readonly string[]): Int32Array => Int32Array.from(texts, hashText);

// Under tsx every use of an imported binding is a getter call: the tables and functions naming uses
// for every record, read once.
const SYLLABLES = nameTables.SYLLABLES;
const CAPITALISED = nameTables.CAPITALISED;
const SURNAME_ENDS = nameTables.SURNAME_ENDS;
const VOWEL_INITIALS = nameTables.VOWEL_INITIALS;
const lastWordEdit = nameTables.lastWordEdit;
const applyEdit = nameTables.applyEdit;

const SYLLABLE_HASHES = hashesOf(SYLLABLES);
const SYLLABLE_LENGTHS = Int32Array.from(SYLLABLES, (syllable) => syllable.length);
const CAPITALISED_HASHES = hashesOf(CAPITALISED);
const SYLLABLE_COUNT = SYLLABLES.length;
/** Each syllable followed by a space: a given name's last syllable and the space are then one join, not two. */
const SPACED_SYLLABLES = SYLLABLES.map((syllable) => `${syllable} `);
const END_COUNT = SURNAME_ENDS.length;
/** A surname's vowel initial and ending together ("o" + "way"), by vowel * END_COUNT + end: one join, not two. */
const VOWEL_ENDS = VOWEL_INITIALS.flatMap((vowel) => SURNAME_ENDS.map((end) => vowel + end));
const VOWEL_END_HASHES = hashesOf(VOWEL_ENDS);
const VOWEL_END_LENGTHS = Int32Array.from(VOWEL_ENDS, (text) => text.length);

/** How a type names its records: people ("First Last") or things ("Word Noun", with the nouns' hashes). */
export interface NameKind {
  person: boolean;
  nouns: readonly string[];
  nounHashes: Int32Array;
  /** Each noun split before its last word ("Cup Tie": " Cup " and "Tie"; "Atlas": " " and "Atlas"), with the space the name puts before it. */
  nounHeads: readonly string[];
  nounTails: readonly string[];
  /** Each noun with the space the name puts before it (" Cup Tie"): a thing name is then one join of its word and this. */
  spacedNouns: readonly string[];
}

export function nameKind(naming: "person" | readonly string[]): NameKind {
  if (naming === "person") return { person: true, nouns: [], nounHashes: new Int32Array(0), nounHeads: [], nounTails: [], spacedNouns: [] };
  const split = naming.map((noun) => noun.lastIndexOf(" ") + 1);
  return {
    person: false,
    nouns: naming,
    nounHashes: hashesOf(naming),
    nounHeads: naming.map((noun, index) => ` ${noun.slice(0, split[index])}`),
    nounTails: naming.map((noun, index) => noun.slice(split[index])),
    spacedNouns: naming.map((noun) => ` ${noun}`),
  };
}

/**
 * Open-addressing table of the names taken in the world being built (cleared by stamp, never
 * reallocated while it fits). Per slot, four numbers side by side: its stamp, the name's hash, the
 * name's position in the world's list of names, and padding: a probe reads one cache line (the table
 * is read at random for every name, and cache misses were a large share of naming). The table holds
 * numbers only: storing the names themselves in a long-lived array made every store a write-barrier
 * slow path (a young string into an old array).
 */
let capacity = 512;
let slots = new Int32Array(capacity * 4);
let tableStamp = 0;
let tableSize = 0;

function slotOf(hash: number): number {
  return Math.imul(hash, 0x9e3779b1) >>> 0;
}

export class WorldNames {
  /**
   * Every name taken in this world, in the order made (the table points into it); `count` of them.
   * This list and the ones below are allocated at the world's size (pushes grew them several times
   * per world) and filled in order; plain arrays (a typed array of this size is allocated outside the
   * heap, slowly, for every world).
   */
  private readonly made: string[];
  private count = 0;
  /** Surnames of the people named so far (thing names may reuse one), and their hashes. */
  private readonly surnames: string[];
  private readonly surnameHashes: number[];
  private surnameCount = 0;
  /** The hash of the last name made, and (people) its last word and that word's hash. */
  private hash = 0;
  private lastWord = "";
  private lastWordHash = 0;
  private readonly clusterHash: number;
  /**
   * The hashes of the names made in this world, and each name split before its last word, the only
   * word a near-duplicate edits; the current type's names start at `typeStart`. Editing the kept last
   * word spares reading the joined name, which V8 holds as an unflattened pair of strings (reading it
   * would copy it).
   */
  private readonly hashes: number[];
  private readonly heads: string[];
  /**
   * What comes between a head and its tail: a thing name's noun before its last word (" ", " Cup "), kept
   * apart so a thing name is one join (word + " Cup Tie"); the two are joined only for a near-duplicate.
   * Empty for people and for names that were not freshly built.
   */
  private readonly middles: string[];
  private readonly tails: string[];
  private typeStart = 0;
  /** The parts of the name `fresh` or `taken` made last. */
  private head = "";
  private middle = "";
  private tail = "";
  /** The empty table slot where the name `has` last found missing goes (-1: none known); `add` takes it. */
  private free = -1;

  constructor(
    private readonly random: Random,
    private readonly nearDuplicateRate: number,
    private readonly sharedWordRate: number,
    private readonly clusterWord: string | null,
    /** How many names the world will take (its records). */
    size: number,
  ) {
    this.made = new Array<string>(size);
    this.surnames = new Array<string>(size);
    this.surnameHashes = new Array<number>(size);
    this.hashes = new Array<number>(size);
    this.heads = new Array<string>(size);
    this.middles = new Array<string>(size);
    this.tails = new Array<string>(size);
    this.clusterHash = clusterWord === null ? 0 : hashText(clusterWord);
    if (++tableStamp === 0x7fffffff) {
      slots.fill(0);
      tableStamp = 1;
    }
    tableSize = 0;
  }

  has(name: string, hash: number): boolean {
    const mask = capacity - 1;
    let slot = slotOf(hash) & mask;
    for (; slots[4 * slot] === tableStamp; slot = (slot + 1) & mask) {
      if (slots[4 * slot + 1] === hash && this.made[slots[4 * slot + 2] as number] === name) return true;
    }
    this.free = slot;
    return false;
  }

  /** Takes `name`: `choose` returns only a name that `has` has just found missing, so its slot is known. */
  private add(name: string, hash: number): void {
    let slot = this.free;
    this.free = -1;
    if (slot < 0 || tableSize * 2 >= capacity) {
      if (tableSize * 2 >= capacity) grow();
      const mask = capacity - 1;
      slot = slotOf(hash) & mask;
      while (slots[4 * slot] === tableStamp) slot = (slot + 1) & mask;
    }
    slots[4 * slot] = tableStamp;
    slots[4 * slot + 1] = hash;
    slots[4 * slot + 2] = this.count;
    this.made[this.count] = name;
    tableSize++;
  }

  /** A given name + surname (the cluster's surname when `inCluster`); sets `hash` and the last word. */
  private freshPerson(inCluster: boolean): string {
    const random = this.random;
    const first = Math.floor(random.next() * SYLLABLE_COUNT);
    const second = Math.floor(random.next() * SYLLABLE_COUNT);
    let hash = join(CAPITALISED_HASHES[first] as number, SYLLABLE_HASHES[second] as number, SYLLABLE_LENGTHS[second] as number);
    // The head is the given name and its space ("Oriveth "): two or three syllables, decided by a draw after the second.
    let head: string;
    if (!(random.next() < 0.5)) {
      const third = Math.floor(random.next() * SYLLABLE_COUNT);
      head = (CAPITALISED[first] as string) + SYLLABLES[second] + SPACED_SYLLABLES[third];
      hash = join(hash, SYLLABLE_HASHES[third] as number, SYLLABLE_LENGTHS[third] as number);
    } else {
      head = (CAPITALISED[first] as string) + SPACED_SYLLABLES[second];
    }
    let word: string;
    let wordHash: number;
    if (inCluster && this.clusterWord !== null) {
      word = this.clusterWord;
      wordHash = this.clusterHash;
    } else {
      const start = Math.floor(random.next() * SYLLABLE_COUNT);
      const vowel = Math.floor(random.next() * VOWEL_INITIALS.length);
      const end = vowel * END_COUNT + Math.floor(random.next() * END_COUNT);
      word = (CAPITALISED[start] as string) + VOWEL_ENDS[end];
      wordHash = join(CAPITALISED_HASHES[start] as number, VOWEL_END_HASHES[end] as number, VOWEL_END_LENGTHS[end] as number);
    }
    this.lastWord = word;
    this.lastWordHash = wordHash;
    this.hash = join(join(hash, SPACE, 1), wordHash, word.length);
    this.head = head;
    this.middle = "";
    this.tail = word;
    return head + word;
  }

  /** A word (a person's surname or a made-up one) + one of the kind's nouns; sets `hash`. */
  private freshThing(kind: NameKind): string {
    const random = this.random;
    const surnameCount = this.surnameCount;
    let word: string;
    let hash: number;
    if (surnameCount > 0 && random.next() < this.sharedWordRate) {
      const index = Math.floor(random.next() * surnameCount);
      word = this.surnames[index] as string;
      hash = this.surnameHashes[index] as number;
    } else {
      const first = Math.floor(random.next() * SYLLABLE_COUNT);
      const second = Math.floor(random.next() * SYLLABLE_COUNT);
      word = (CAPITALISED[first] as string) + SYLLABLES[second];
      hash = join(CAPITALISED_HASHES[first] as number, SYLLABLE_HASHES[second] as number, SYLLABLE_LENGTHS[second] as number);
    }
    const nouns = kind.nouns;
    if (nouns.length === 0) throw new RangeError("pick from an empty list");
    const noun = Math.floor(random.next() * nouns.length);
    const text = nouns[noun] as string;
    this.hash = join(join(hash, SPACE, 1), kind.nounHashes[noun] as number, text.length);
    this.head = word;
    this.middle = kind.nounHeads[noun] as string;
    this.tail = kind.nounTails[noun] as string;
    return word + (kind.spacedNouns[noun] as string);
  }

  private fresh(kind: NameKind, inCluster: boolean): string {
    return kind.person ? this.freshPerson(inCluster) : this.freshThing(kind);
  }

  /** Starts the names of another type: near-duplicates copy names of the same type only. */
  beginType(): void {
    this.typeStart = this.count;
  }

  /**
   * A new unique name for a record of a type named by `kind` ("person" or thing nouns): with
   * `nearDuplicateRate`, a look-alike of a name made since `beginType`, else a fresh one, suffixed
   * " 2", " 3"… after 20 collisions. Records the name as taken.
   */
  make(kind: NameKind, inCluster: boolean): string {
    const name = this.choose(kind, inCluster);
    this.add(name, this.hash);
    if (kind.person) {
      this.surnames[this.surnameCount] = this.lastWord;
      this.surnameHashes[this.surnameCount++] = this.lastWordHash;
    }
    const count = this.count++;
    this.hashes[count] = this.hash;
    this.heads[count] = this.head;
    this.middles[count] = this.middle;
    this.tails[count] = this.tail;
    return name;
  }

  private choose(kind: NameKind, inCluster: boolean): string {
    const random = this.random;
    const count = this.count - this.typeStart;
    if (!inCluster && count > 0 && random.next() < this.nearDuplicateRate) {
      const index = this.typeStart + Math.floor(random.next() * count);
      // The edit of the original's last word (`nearDuplicateEdit` of the whole name draws the same).
      const tail = this.tails[index] as string;
      const edit = lastWordEdit(tail, 0, random);
      if (edit >= 0) {
        const editedTail = applyEdit(tail, edit);
        const middle = this.middles[index] as string;
        const head = middle.length === 0 ? (this.heads[index] as string) : (this.heads[index] as string) + middle;
        const copy = head + editedTail;
        const position = Math.floor(edit / 65536);
        const hash =
          editedTail.length === tail.length && edit % 65536 !== 65535
            ? (Math.imul((edit % 65536) - tail.charCodeAt(position), power(tail.length - 1 - position)) + (this.hashes[index] as number)) | 0
            : hashText(copy);
        if (!this.has(copy, hash)) return this.taken(kind, copy, hash, head, editedTail);
      }
    }
    for (let attempt = 0; attempt < 20; attempt++) {
      const name = this.fresh(kind, inCluster);
      if (!this.has(name, this.hash)) return name;
    }
    const base = this.fresh(kind, inCluster);
    let suffix = 2;
    while (this.has(`${base} ${suffix}`, hashText(`${base} ${suffix}`))) suffix++;
    return this.taken(kind, `${base} ${suffix}`, hashText(`${base} ${suffix}`), `${base} `, String(suffix));
  }

  /** Sets `hash`, the parts and (for people) the last word of a name that was not freshly built; `tail` is its last word. */
  private taken(kind: NameKind, name: string, hash: number, head: string, tail: string): string {
    this.hash = hash;
    this.head = head;
    this.middle = "";
    this.tail = tail;
    if (kind.person) {
      this.lastWord = tail;
      this.lastWordHash = hashText(tail);
    }
    return name;
  }
}

function grow(): void {
  const old = slots;
  const oldCapacity = capacity;
  capacity *= 2;
  slots = new Int32Array(capacity * 4);
  const mask = capacity - 1;
  for (let from = 0; from < oldCapacity; from++) {
    if (old[4 * from] !== tableStamp) continue;
    const hash = old[4 * from + 1] as number;
    let slot = slotOf(hash) & mask;
    while (slots[4 * slot] === tableStamp) slot = (slot + 1) & mask;
    slots[4 * slot] = tableStamp;
    slots[4 * slot + 1] = hash;
    slots[4 * slot + 2] = old[4 * from + 2] as number;
  }
}
