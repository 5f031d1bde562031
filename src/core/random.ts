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

function hashString(text: string, state: Int32Array): void {
  let h1 = 1779033703,
    h2 = 3144134277,
    h3 = 1013904242,
    h4 = 2773480762;
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
  state[0] = h1 ^ h2 ^ h3 ^ h4;
  state[1] = h2 ^ h1;
  state[2] = h3 ^ h1;
  state[3] = h4 ^ h1;
}

/**
 * The sfc32 stream. Its state lives in an Int32Array (the same bits as unsigned words), so drawing a
 * number allocates nothing; the methods live on the prototype, so making a stream is cheap.
 */
class Sfc32 implements Random {
  private readonly state = new Int32Array(4);

  constructor(private readonly key: string) {
    hashString(key, this.state);
    for (let i = 0; i < 12; i++) this.next();
  }

  next(): number {
    const state = this.state;
    const a = state[0] as number,
      b = state[1] as number,
      c = state[2] as number;
    const d = ((state[3] as number) + 1) | 0;
    const t = (((a + b) | 0) + d) | 0;
    state[0] = b ^ (b >>> 9);
    state[1] = (c + (c << 3)) | 0;
    state[2] = (((c << 21) | (c >>> 11)) + t) | 0;
    state[3] = d;
    return (t >>> 0) / 4294967296;
  }

  integer(low: number, high: number): number {
    return low + Math.floor(this.next() * (high - low + 1));
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("pick from an empty list");
    return items[Math.floor(this.next() * items.length)] as T;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j] as T, items[i] as T];
    }
    return items;
  }

  fork(childKey: string | number): Random {
    return createRandom(this.key, "fork", childKey);
  }
}

export function createRandom(...keyParts: Array<string | number>): Random {
  return new Sfc32(keyParts.join("\u0000"));
}
