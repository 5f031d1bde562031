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
const SYLLABLES: string[] = [];
const CAPITALISED: string[] = [];
for (const onset of onsets) {
  for (const vowel of vowels) {
    for (const coda of new Set(codas)) {
      const text = onset + vowel + coda;
      SYLLABLES.push(text);
      CAPITALISED.push(text.charAt(0).toUpperCase() + text.slice(1));
    }
  }
}

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
  return capitalSyllable(random) + random.pick(vowels).charAt(0) + random.pick(surnameEnds);
}

export function placeName(random: Random): string {
  return capitalSyllable(random) + random.pick(placeEnds);
}

/** A single capitalised made-up word for thing names. */
export function wordName(random: Random): string {
  return capitalSyllable(random) + syllable(random);
}

/**
 * A near-duplicate of `name`: one letter of its last word swapped for a look-alike ("Calloway" →
 * "Galloway"), or one vowel changed. Returns null when no change is possible.
 */
export function nearDuplicate(name: string, random: Random): string | null {
  const start = name.lastIndexOf(" ") + 1;
  for (let attempt = 0; attempt < 6; attempt++) {
    const position = start + random.integer(0, name.length - start - 1);
    const letter = name.charAt(position);
    const lower = letter.toLowerCase();
    let replacement = lookalikes[lower];
    if (replacement === undefined && "aeiou".includes(lower)) replacement = random.pick(["a", "e", "i", "o", "u"].filter((vowel) => vowel !== lower));
    if (replacement === undefined) continue;
    if (letter !== lower) replacement = replacement.toUpperCase();
    return name.slice(0, position) + replacement + name.slice(position + 1);
  }
  return null;
}
