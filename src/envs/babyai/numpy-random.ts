/**
 * A bit-exact port of the numpy draws Minigrid makes: `Generator(PCG64(SeedSequence(seed)))` and its
 * `integers(low, high)` (half-open, default int64 dtype, which uses 32-bit Lemire rejection for small
 * ranges). Facts and constants follow numpy's `bit_generator.pyx`, `pcg64.h` and `distributions.c`.
 *
 * The 128-bit PCG state is held as eight 16-bit limbs in plain numbers (no BigInt on the hot path):
 * a full step is 36 limb products, exact in float64.
 */

const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const POOL_SIZE = 4;

/** The PCG64 multiplier 0x2360ED051FC65DA44385DF649FCCF645 as 16-bit limbs, least significant first. */
const MULTIPLIER = [0xf645, 0x9fcc, 0xdf64, 0x4385, 0x5da4, 0x1fc6, 0xed05, 0x2360];

/** Splits a non-negative integer seed (or several 32-bit words) into little-endian uint32 entropy words. */
export function entropyWords(seed: number | bigint | readonly number[]): number[] {
  if (Array.isArray(seed)) return seed.map((word) => word >>> 0);
  let value = BigInt(seed as number | bigint);
  if (value < 0n) throw new RangeError(`numpy seeds must be non-negative, got ${value}`);
  if (value === 0n) return [0];
  const words: number[] = [];
  while (value > 0n) {
    words.push(Number(value & 0xffffffffn));
    value >>= 32n;
  }
  return words;
}

/** numpy `SeedSequence(entropy).generate_state(wordCount, uint32)`. */
export function seedSequenceState(entropy: readonly number[], wordCount: number): Uint32Array {
  let hashConstant = INIT_A;
  const hashmix = (input: number): number => {
    let value = (input ^ hashConstant) >>> 0;
    hashConstant = Math.imul(hashConstant, MULT_A) >>> 0;
    value = Math.imul(value, hashConstant) >>> 0;
    return (value ^ (value >>> 16)) >>> 0;
  };
  const mix = (x: number, y: number): number => {
    const result = (Math.imul(MIX_MULT_L, x) - Math.imul(MIX_MULT_R, y)) >>> 0;
    return (result ^ (result >>> 16)) >>> 0;
  };
  const pool = new Uint32Array(POOL_SIZE);
  for (let i = 0; i < POOL_SIZE; i++) pool[i] = hashmix(i < entropy.length ? (entropy[i] as number) : 0);
  for (let source = 0; source < POOL_SIZE; source++) {
    for (let target = 0; target < POOL_SIZE; target++) {
      if (source !== target) pool[target] = mix(pool[target] as number, hashmix(pool[source] as number));
    }
  }
  for (let source = POOL_SIZE; source < entropy.length; source++) {
    for (let target = 0; target < POOL_SIZE; target++) pool[target] = mix(pool[target] as number, hashmix(entropy[source] as number));
  }
  const state = new Uint32Array(wordCount);
  let generateConstant = INIT_B;
  for (let i = 0; i < wordCount; i++) {
    let value = ((pool[i % POOL_SIZE] as number) ^ generateConstant) >>> 0;
    generateConstant = Math.imul(generateConstant, MULT_B) >>> 0;
    value = Math.imul(value, generateConstant) >>> 0;
    state[i] = (value ^ (value >>> 16)) >>> 0;
  }
  return state;
}

/** Puts a 64-bit value given as (high, low) uint32 words into limbs[offset..offset+3]. */
function setLimbs(limbs: number[], offset: number, high: number, low: number): void {
  limbs[offset] = low & 0xffff;
  limbs[offset + 1] = low >>> 16;
  limbs[offset + 2] = high & 0xffff;
  limbs[offset + 3] = high >>> 16;
}

/** numpy's `Generator(PCG64(SeedSequence(seed)))`, restricted to what Minigrid calls. */
export class NumpyGenerator {
  private readonly state = [0, 0, 0, 0, 0, 0, 0, 0];
  private readonly increment = [0, 0, 0, 0, 0, 0, 0, 0];
  private hasBuffered = false;
  private buffered = 0;

  constructor(seed: number | bigint | readonly number[]) {
    const words = seedSequenceState(entropyWords(seed), 8);
    // generate_state(4, uint64): u_k = words[2k] | words[2k+1] << 32; initstate = u0<<64 | u1; initseq = u2<<64 | u3.
    const initialState = [0, 0, 0, 0, 0, 0, 0, 0];
    const sequence = [0, 0, 0, 0, 0, 0, 0, 0];
    setLimbs(initialState, 4, words[1] as number, words[0] as number);
    setLimbs(initialState, 0, words[3] as number, words[2] as number);
    setLimbs(sequence, 4, words[5] as number, words[4] as number);
    setLimbs(sequence, 0, words[7] as number, words[6] as number);
    // inc = (initseq << 1) | 1
    let carry = 1;
    for (let i = 0; i < 8; i++) {
      const doubled = (sequence[i] as number) * 2 + carry;
      this.increment[i] = doubled & 0xffff;
      carry = doubled >>> 16;
    }
    this.step();
    carry = 0;
    for (let i = 0; i < 8; i++) {
      const sum = (this.state[i] as number) + (initialState[i] as number) + carry;
      this.state[i] = sum & 0xffff;
      carry = sum >>> 16;
    }
    this.step();
  }

  /** state = state · MULTIPLIER + increment (mod 2^128). */
  private step(): void {
    const s = this.state;
    const m = MULTIPLIER;
    const s0 = s[0] as number,
      s1 = s[1] as number,
      s2 = s[2] as number,
      s3 = s[3] as number;
    const s4 = s[4] as number,
      s5 = s[5] as number,
      s6 = s[6] as number,
      s7 = s[7] as number;
    const m0 = m[0] as number,
      m1 = m[1] as number,
      m2 = m[2] as number,
      m3 = m[3] as number;
    const m4 = m[4] as number,
      m5 = m[5] as number,
      m6 = m[6] as number,
      m7 = m[7] as number;
    const inc = this.increment;
    // value - carry · 65536 rather than value % 65536: the same exact result (value < 2^53) without a
    // floating-point remainder, the slowest operation of this hot loop.
    let value = s0 * m0 + (inc[0] as number);
    let carry = Math.floor(value / 65536);
    s[0] = value - carry * 65536;
    value = s0 * m1 + s1 * m0 + (inc[1] as number) + carry;
    carry = Math.floor(value / 65536);
    s[1] = value - carry * 65536;
    value = s0 * m2 + s1 * m1 + s2 * m0 + (inc[2] as number) + carry;
    carry = Math.floor(value / 65536);
    s[2] = value - carry * 65536;
    value = s0 * m3 + s1 * m2 + s2 * m1 + s3 * m0 + (inc[3] as number) + carry;
    carry = Math.floor(value / 65536);
    s[3] = value - carry * 65536;
    value = s0 * m4 + s1 * m3 + s2 * m2 + s3 * m1 + s4 * m0 + (inc[4] as number) + carry;
    carry = Math.floor(value / 65536);
    s[4] = value - carry * 65536;
    value = s0 * m5 + s1 * m4 + s2 * m3 + s3 * m2 + s4 * m1 + s5 * m0 + (inc[5] as number) + carry;
    carry = Math.floor(value / 65536);
    s[5] = value - carry * 65536;
    value = s0 * m6 + s1 * m5 + s2 * m4 + s3 * m3 + s4 * m2 + s5 * m1 + s6 * m0 + (inc[6] as number) + carry;
    carry = Math.floor(value / 65536);
    s[6] = value - carry * 65536;
    value = s0 * m7 + s1 * m6 + s2 * m5 + s3 * m4 + s4 * m3 + s5 * m2 + s6 * m1 + s7 * m0 + (inc[7] as number) + carry;
    s[7] = value - Math.floor(value / 65536) * 65536;
  }

  /** One 64-bit XSL-RR output as [low32, high32]; the low half is returned, the high half buffered. */
  nextUint32(): number {
    if (this.hasBuffered) {
      this.hasBuffered = false;
      return this.buffered;
    }
    this.step();
    const s = this.state;
    const xorLow = ((s[0] as number) | ((s[1] as number) << 16)) ^ ((s[4] as number) | ((s[5] as number) << 16));
    const xorHigh = ((s[2] as number) | ((s[3] as number) << 16)) ^ ((s[6] as number) | ((s[7] as number) << 16));
    let rotation = (s[7] as number) >>> 10;
    let low = xorLow >>> 0;
    let high = xorHigh >>> 0;
    if (rotation >= 32) {
      const swap = low;
      low = high;
      high = swap;
      rotation -= 32;
    }
    if (rotation > 0) {
      const newLow = ((low >>> rotation) | (high << (32 - rotation))) >>> 0;
      const newHigh = ((high >>> rotation) | (low << (32 - rotation))) >>> 0;
      low = newLow;
      high = newHigh;
    }
    this.buffered = high;
    this.hasBuffered = true;
    return low;
  }

  /** `Generator.integers(low, high)`: uniform in [low, high). A range of one value consumes nothing. */
  integers(low: number, high: number): number {
    const range = high - 1 - low;
    if (range < 0) throw new RangeError(`integers(${low}, ${high}): high must be greater than low`);
    if (range === 0) return low;
    if (range >= 0xffffffff) throw new RangeError(`integers(${low}, ${high}): ranges of 2^32 or more are not ported`);
    const exclusive = range + 1;
    // Lemire's method on the 64-bit product, split by division by 2^32 (exact) rather than a remainder.
    let product = this.nextUint32() * exclusive;
    let quotient = Math.floor(product / 4294967296);
    let leftover = product - quotient * 4294967296;
    if (leftover < exclusive) {
      const threshold = (4294967295 - range) % exclusive;
      while (leftover < threshold) {
        product = this.nextUint32() * exclusive;
        quotient = Math.floor(product / 4294967296);
        leftover = product - quotient * 4294967296;
      }
    }
    return low + quotient;
  }

  /** Minigrid's `_rand_elem`: `items[integers(0, len)]`. */
  element<T>(items: readonly T[]): T {
    return items[this.integers(0, items.length)] as T;
  }
}
