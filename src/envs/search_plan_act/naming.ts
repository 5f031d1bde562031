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
}

export function nameKind(naming: "person" | readonly string[]): NameKind {
  if (naming === "person") return { person: true, nouns: [], nounHashes: new Int32Array(0), nounHeads: [], nounTails: [] };
  const split = naming.map((noun) => noun.lastIndexOf(" ") + 1);
  return {
    person: false,
    nouns: naming,
    nounHashes: hashesOf(naming),
    nounHeads: naming.map((noun, index) => ` ${noun.slice(0, split[index])}`),
    nounTails: naming.map((noun, index) => noun.slice(split[index])),
  };
}

/** Open-addressing table of the names taken in the world being built (cleared by stamp, never reallocated while it fits). */
let capacity = 512;
/**
 * Per slot, its stamp then its hash, side by side: a probe reads one cache line (the table is read at
 * random for every name, and cache misses were a large share of naming).
 */
let slotStampsAndHashes = new Int32Array(capacity * 2);
let slotNames: string[] = new Array<string>(capacity).fill("");
let tableStamp = 0;
let tableSize = 0;

function slotOf(hash: number): number {
  return Math.imul(hash, 0x9e3779b1) >>> 0;
}

/**
 * Lists a world's names keep while it is built, reused from world to world (a world is built before
 * the next starts, as with the name table): entries past a list's count are stale. Writing by index
 * into kept storage spares growing new arrays for every world and every type.
 */
const surnameScratch: string[] = [];
const surnameHashScratch: number[] = [];
const hashScratch: number[] = [];
const headScratch: string[] = [];
const tailScratch: string[] = [];

export class WorldNames {
  /** Surnames of the people named so far (thing names may reuse one) in `surnameScratch`, their hashes beside them. */
  private surnameCount = 0;
  /** The hash of the last name made, and (people) its last word and that word's hash. */
  private hash = 0;
  private lastWord = "";
  private lastWordHash = 0;
  private readonly clusterHash: number;
  /**
   * How many names were made for the current type (since `beginType`): their hashes, and each name
   * split before its last word, the only word a near-duplicate edits, are in the scratch lists. Editing
   * the kept last word spares reading the joined name, which V8 holds as an unflattened pair of strings
   * (reading it would copy it).
   */
  private sameTypeCount = 0;
  /** The parts of the name `fresh` or `taken` made last. */
  private head = "";
  private tail = "";

  constructor(
    private readonly random: Random,
    private readonly nearDuplicateRate: number,
    private readonly sharedWordRate: number,
    private readonly clusterWord: string | null,
  ) {
    this.clusterHash = clusterWord === null ? 0 : hashText(clusterWord);
    if (++tableStamp === 0x7fffffff) {
      slotStampsAndHashes.fill(0);
      tableStamp = 1;
    }
    tableSize = 0;
  }

  has(name: string, hash: number): boolean {
    const mask = capacity - 1;
    for (let slot = slotOf(hash) & mask; slotStampsAndHashes[2 * slot] === tableStamp; slot = (slot + 1) & mask) {
      if (slotStampsAndHashes[2 * slot + 1] === hash && slotNames[slot] === name) return true;
    }
    return false;
  }

  private add(name: string, hash: number): void {
    if (tableSize * 2 >= capacity) grow();
    const mask = capacity - 1;
    let slot = slotOf(hash) & mask;
    while (slotStampsAndHashes[2 * slot] === tableStamp) slot = (slot + 1) & mask;
    slotStampsAndHashes[2 * slot] = tableStamp;
    slotStampsAndHashes[2 * slot + 1] = hash;
    slotNames[slot] = name;
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
      word = surnameScratch[index] as string;
      hash = surnameHashScratch[index] as number;
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
    const head = word + (kind.nounHeads[noun] as string);
    const tail = kind.nounTails[noun] as string;
    this.head = head;
    this.tail = tail;
    return head + tail;
  }

  private fresh(kind: NameKind, inCluster: boolean): string {
    return kind.person ? this.freshPerson(inCluster) : this.freshThing(kind);
  }

  /** Starts the names of another type: near-duplicates copy names of the same type only. */
  beginType(): void {
    this.sameTypeCount = 0;
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
      surnameScratch[this.surnameCount] = this.lastWord;
      surnameHashScratch[this.surnameCount++] = this.lastWordHash;
    }
    const count = this.sameTypeCount++;
    hashScratch[count] = this.hash;
    headScratch[count] = this.head;
    tailScratch[count] = this.tail;
    return name;
  }

  private choose(kind: NameKind, inCluster: boolean): string {
    const random = this.random;
    const count = this.sameTypeCount;
    if (!inCluster && count > 0 && random.next() < this.nearDuplicateRate) {
      const index = Math.floor(random.next() * count);
      // The edit of the original's last word (`nearDuplicateEdit` of the whole name draws the same).
      const tail = tailScratch[index] as string;
      const edit = lastWordEdit(tail, 0, random);
      if (edit >= 0) {
        const editedTail = applyEdit(tail, edit);
        const head = headScratch[index] as string;
        const copy = head + editedTail;
        const position = Math.floor(edit / 65536);
        const hash =
          editedTail.length === tail.length && edit % 65536 !== 65535
            ? (Math.imul((edit % 65536) - tail.charCodeAt(position), power(tail.length - 1 - position)) + (hashScratch[index] as number)) | 0
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
    this.tail = tail;
    if (kind.person) {
      this.lastWord = tail;
      this.lastWordHash = hashText(tail);
    }
    return name;
  }
}

function grow(): void {
  const names: string[] = [];
  const hashes: number[] = [];
  for (let slot = 0; slot < capacity; slot++) {
    if (slotStampsAndHashes[2 * slot] === tableStamp) {
      names.push(slotNames[slot] as string);
      hashes.push(slotStampsAndHashes[2 * slot + 1] as number);
    }
  }
  capacity *= 2;
  slotStampsAndHashes = new Int32Array(capacity * 2);
  slotNames = new Array<string>(capacity).fill("");
  tableSize = 0;
  const mask = capacity - 1;
  for (let i = 0; i < names.length; i++) {
    let slot = slotOf(hashes[i] as number) & mask;
    while (slotStampsAndHashes[2 * slot] === tableStamp) slot = (slot + 1) & mask;
    slotStampsAndHashes[2 * slot] = tableStamp;
    slotStampsAndHashes[2 * slot + 1] = hashes[i] as number;
    slotNames[slot] = names[i] as string;
    tableSize++;
  }
}
