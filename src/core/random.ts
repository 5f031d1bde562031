/**
 * Deterministic random streams for task generation. A stream is keyed by a hash of its parts
 * (e.g. split, seed, index), never `seed + index`, so neighbouring streams never overlap.
 * Generator: sfc32 (32-bit, passes PractRand), seeded from a 128-bit FNV/murmur mix of the key.
 */
export interface Random {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [low, high] inclusive. */
  integer(low: number, high: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
  shuffle<T>(items: T[]): T[];
  /** An independent child stream keyed by `key`. */
  fork(key: string | number): Random;
}

function hashString(text: string): [number, number, number, number] {
  let h1 = 1779033703, h2 = 3144134277, h3 = 1013904242, h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  return [(h1 ^ h2 ^ h3 ^ h4) >>> 0, (h2 ^ h1) >>> 0, (h3 ^ h1) >>> 0, (h4 ^ h1) >>> 0];
}

export function createRandom(...keyParts: Array<string | number>): Random {
  const key = keyParts.join("\u0000");
  let [a, b, c, d] = hashString(key);
  const next = (): number => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  const random: Random = {
    next,
    integer: (low, high) => low + Math.floor(next() * (high - low + 1)),
    pick: (items) => {
      if (items.length === 0) throw new RangeError("pick from an empty list");
      return items[Math.floor(next() * items.length)] as (typeof items)[number];
    },
    chance: (probability) => next() < probability,
    shuffle: (items) => {
      for (let i = items.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [items[i], items[j]] = [items[j] as (typeof items)[number], items[i] as (typeof items)[number]];
      }
      return items;
    },
    fork: (childKey) => createRandom(key, "fork", childKey),
  };
  return random;
}
