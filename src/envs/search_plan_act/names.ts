import type { Random } from "../../core/index.ts";

/**
 * Syllable-built names: nothing a model knows from pretraining. People get "First Last"
 * ("Oriveth Calloway"), places a single word ("Marrowfield"), things "Word Noun" ("Tessaly Atlas").
 */
const onsets = [
  "b",
  "c",
  "d",
  "f",
  "g",
  "h",
  "k",
  "l",
  "m",
  "n",
  "p",
  "r",
  "s",
  "t",
  "v",
  "w",
  "z",
  "br",
  "cl",
  "dr",
  "gr",
  "th",
  "st",
  "tr",
  "vel",
  "mar",
  "cor",
  "fen",
  "ol",
  "or",
  "al",
  "el",
  "is",
  "ul",
];
const vowels = ["a", "e", "i", "o", "u", "ae", "ia", "io", "ea", "ai", "y"];
const codas = ["", "", "", "n", "r", "l", "s", "th", "v", "x", "m", "nd", "rk"];
const surnameEnds = ["way", "ton", "ell", "ford", "wick", "more", "by", "den", "ley", "ash", "mont", "ridge", "holm", "stead", "ard"];
const placeEnds = ["field", "ford", "mere", "holt", "bury", "haven", "gate", "moor", "dale", "port"];

/** Consonant swaps that make near-duplicates look alike: Calloway / Galloway. */
const lookalikes: Record<string, string> = {
  c: "g",
  g: "c",
  b: "p",
  p: "b",
  d: "t",
  t: "d",
  m: "n",
  n: "m",
  k: "c",
  v: "f",
  f: "v",
  s: "z",
  z: "s",
  r: "l",
  l: "r",
  h: "w",
  w: "h",
};

/** Every onset + vowel + coda combination, plain and capitalised: one random draw per syllable. */
export const SYLLABLES: string[] = [];
export const CAPITALISED: string[] = [];
for (const onset of onsets) {
  for (const vowel of vowels) {
    for (const coda of new Set(codas)) {
      const text = onset + vowel + coda;
      SYLLABLES.push(text);
      CAPITALISED.push(text.charAt(0).toUpperCase() + text.slice(1));
    }
  }
}
/** The first letter of each vowel (what a surname takes from one), in `vowels` order. */
export const VOWEL_INITIALS: readonly string[] = vowels.map((vowel) => vowel.charAt(0));
export const SURNAME_ENDS: readonly string[] = surnameEnds;

function syllable(random: Random): string {
  return SYLLABLES[Math.floor(random.next() * SYLLABLES.length)] as string;
}

function capitalSyllable(random: Random): string {
  return CAPITALISED[Math.floor(random.next() * CAPITALISED.length)] as string;
}

export function givenName(random: Random): string {
  const name = capitalSyllable(random) + syllable(random);
  return random.next() < 0.5 ? name : name + syllable(random);
}

export function surname(random: Random): string {
  return capitalSyllable(random) + random.pick(VOWEL_INITIALS) + random.pick(surnameEnds);
}

export function placeName(random: Random): string {
  return capitalSyllable(random) + random.pick(placeEnds);
}

/** A single capitalised made-up word for thing names. */
export function wordName(random: Random): string {
  return capitalSyllable(random) + syllable(random);
}

/** Look-alike letter codes by lowercase ASCII code (-1: none). */
const LOOKALIKE_CODES = new Int16Array(128).fill(-1);
for (const [letter, replacement] of Object.entries(lookalikes)) LOOKALIKE_CODES[letter.charCodeAt(0)] = replacement.charCodeAt(0);
/** For each lowercase vowel code, the other four vowels' codes in "aeiou" order (what a vowel may become). */
const OTHER_VOWELS: Array<readonly number[] | undefined> = [];
for (const vowel of "aeiou") OTHER_VOWELS[vowel.charCodeAt(0)] = [..."aeiou"].filter((other) => other !== vowel).map((other) => other.charCodeAt(0));

/**
 * The edit `nearDuplicate` makes to `name`, as `position * 65536 + replacement character code`, or -1
 * when no change is possible. Draws exactly what `nearDuplicate` draws.
 */
export function nearDuplicateEdit(name: string, random: Random): number {
  return lastWordEdit(name, name.lastIndexOf(" ") + 1, random);
}

/**
 * `nearDuplicateEdit` of a name whose last word starts at `start`: with `start` 0 and the last word
 * alone, the edit of that word (what a name built from parts passes, so the joined name is never read).
 */
export function lastWordEdit(name: string, start: number, random: Random): number {
  for (let attempt = 0; attempt < 6; attempt++) {
    const position = start + random.integer(0, name.length - start - 1);
    const code = name.charCodeAt(position);
    let replacement: number;
    if (code < 128) {
      const lower = code >= 65 && code <= 90 ? code + 32 : code;
      replacement = LOOKALIKE_CODES[lower] as number;
      if (replacement < 0) {
        const others = OTHER_VOWELS[lower];
        if (others === undefined) continue;
        replacement = others[Math.floor(random.next() * others.length)] as number;
      }
      if (code !== lower) replacement -= 32;
    } else {
      replacement = generalReplacement(name, position, random);
      if (replacement < 0) continue;
    }
    return position * 65536 + replacement;
  }
  return -1;
}

/** The replacement text of the last `generalReplacement` (casing a non-ASCII letter may change its length). */
let generalText = "";
const GENERAL = 65535;

/** The replacement beyond ASCII (or past the end of the name), by the general string rules: GENERAL, or -1 for none. */
function generalReplacement(name: string, position: number, random: Random): number {
  const letter = name.charAt(position);
  const lower = letter.toLowerCase();
  let replacement = lookalikes[lower];
  if (replacement === undefined && "aeiou".includes(lower)) replacement = random.pick(["a", "e", "i", "o", "u"].filter((vowel) => vowel !== lower));
  if (replacement === undefined) return -1;
  generalText = letter !== lower ? replacement.toUpperCase() : replacement;
  return GENERAL;
}

/** `name` with `edit` (a non-negative result of `nearDuplicateEdit`, applied right after it) made. */
export function applyEdit(name: string, edit: number): string {
  const position = Math.floor(edit / 65536);
  const code = edit % 65536;
  return name.slice(0, position) + (code === GENERAL ? generalText : String.fromCharCode(code)) + name.slice(position + 1);
}

/**
 * A near-duplicate of `name`: one letter of its last word swapped for a look-alike ("Calloway" →
 * "Galloway"), or one vowel changed. Returns null when no change is possible.
 */
export function nearDuplicate(name: string, random: Random): string | null {
  const edit = nearDuplicateEdit(name, random);
  return edit < 0 ? null : applyEdit(name, edit);
}
