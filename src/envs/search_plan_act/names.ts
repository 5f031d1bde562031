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

function syllable(random: Random): string {
  return random.pick(onsets) + random.pick(vowels) + random.pick(codas);
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

export function givenName(random: Random): string {
  const count = random.chance(0.5) ? 2 : 3;
  let word = "";
  for (let i = 0; i < count; i++) word += syllable(random);
  return capitalize(word);
}

export function surname(random: Random): string {
  return capitalize(syllable(random) + random.pick(vowels).slice(0, 1) + random.pick(surnameEnds));
}

export function placeName(random: Random): string {
  return capitalize(syllable(random) + random.pick(placeEnds));
}

/** A single capitalised made-up word for thing names. */
export function wordName(random: Random): string {
  return capitalize(syllable(random) + syllable(random));
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
