/**
 * A bit-exact port of the numpy draws Minigrid makes: `Generator(PCG64(SeedSequence(seed)))` and its
 * `integers(low, high)` (half-open, default int64 dtype, which uses 32-bit Lemire rejection for small
 * ranges). Facts and constants follow numpy's `bit_generator.pyx`, `pcg64.h` and `distributions.c`.
 *
 * The 128-bit PCG state is held as four 32-bit words in plain numbers (no BigInt on the hot path). A
 * BabyAI reset makes about 250 draws, so the step and the seeding are written to be cheap: a step is
 * ten 32×32-bit products (only the low 128 bits of the 256-bit product are kept).
 */

const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const POOL_SIZE = 4;
const TWO_32 = 4294967296;

/**
 * The high 32 bits of the 64-bit product a·b of two uint32, given its low 32 bits. The float product is
 * within 2^10 of the exact one (53-bit mantissa), so (a·b − low) / 2^32 is within 2^-21 of an integer
 * and rounding recovers the exact high word. Rounding is "add one half, truncate" (the value is never
 * below −0.5 nor above 2^32), measurably cheaper here than Math.round.
 */
function productHigh(a: number, b: number, low: number): number {
  // 2^32 written out: V8 folds a literal, while a module-level constant is loaded and checked each call.
  return ((a * b - low) / 4294967296 + 0.5) >>> 0;
}

/** Splits a non-negative integer seed (or several 32-bit words) into little-endian uint32 entropy words. */
export function entropyWords(seed: number | bigint | readonly number[]): number[] {
  if (Array.isArray(seed)) return seed.map((word) => word >>> 0);
  // Plain integer seeds (every BALROG seed) skip the BigInt path: it cost as much as the level's draws.
  if (typeof seed === "number" && Number.isSafeInteger(seed) && seed >= 0) {
    if (seed < TWO_32) return [seed];
    const high = Math.floor(seed / TWO_32);
    return [seed - high * TWO_32, high];
  }
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

/** SeedSequence's running hash constant; module state reset by each `seedSequenceState` call (synchronous). */
let hashConstant = INIT_A;

function hashmix(input: number): number {
  let value = (input ^ hashConstant) >>> 0;
  hashConstant = Math.imul(hashConstant, MULT_A) >>> 0;
  value = Math.imul(value, hashConstant) >>> 0;
  return (value ^ (value >>> 16)) >>> 0;
}

function mix(x: number, y: number): number {
  const result = (Math.imul(MIX_MULT_L, x) - Math.imul(MIX_MULT_R, y)) >>> 0;
  return (result ^ (result >>> 16)) >>> 0;
}

/** numpy `SeedSequence(entropy).generate_state(wordCount, uint32)`. */
export function seedSequenceState(entropy: readonly number[], wordCount: number): number[] {
  hashConstant = INIT_A;
  // Plain arrays: this runs once per reset, and a typed array costs more to create than to fill here.
  const pool = [0, 0, 0, 0];
  for (let i = 0; i < POOL_SIZE; i++) pool[i] = hashmix(i < entropy.length ? (entropy[i] as number) : 0);
  for (let source = 0; source < POOL_SIZE; source++) {
    for (let target = 0; target < POOL_SIZE; target++) {
      if (source !== target) pool[target] = mix(pool[target] as number, hashmix(pool[source] as number));
    }
  }
  for (let source = POOL_SIZE; source < entropy.length; source++) {
    for (let target = 0; target < POOL_SIZE; target++) pool[target] = mix(pool[target] as number, hashmix(entropy[source] as number));
  }
  const state = new Array<number>(wordCount);
  let generateConstant = INIT_B;
  for (let i = 0; i < wordCount; i++) {
    let value = ((pool[i % POOL_SIZE] as number) ^ generateConstant) >>> 0;
    generateConstant = Math.imul(generateConstant, MULT_B) >>> 0;
    value = Math.imul(value, generateConstant) >>> 0;
    state[i] = (value ^ (value >>> 16)) >>> 0;
  }
  return state;
}

/** numpy's `Generator(PCG64(SeedSequence(seed)))`, restricted to what Minigrid calls. */
export class NumpyGenerator {
  // The state and the increment, 32-bit words least significant first.
  private state0 = 0;
  private state1 = 0;
  private state2 = 0;
  private state3 = 0;
  private increment0 = 0;
  private increment1 = 0;
  private increment2 = 0;
  private increment3 = 0;
  private hasBuffered = false;
  private buffered = 0;

  constructor(seed: number | bigint | readonly number[]) {
    const words = seedSequenceState(entropyWords(seed), 8);
    // generate_state(4, uint64): u_k = words[2k] | words[2k+1] << 32; initstate = u0<<64 | u1; initseq = u2<<64 | u3.
    const sequence0 = words[6] as number;
    const sequence1 = words[7] as number;
    const sequence2 = words[4] as number;
    const sequence3 = words[5] as number;
    // inc = (initseq << 1) | 1
    this.increment0 = ((sequence0 << 1) | 1) >>> 0;
    this.increment1 = ((sequence1 << 1) | (sequence0 >>> 31)) >>> 0;
    this.increment2 = ((sequence2 << 1) | (sequence1 >>> 31)) >>> 0;
    this.increment3 = ((sequence3 << 1) | (sequence2 >>> 31)) >>> 0;
    // state = 0; step; state += initstate; step.
    this.step();
    let sum = this.state0 + (words[2] as number);
    this.state0 = sum >>> 0;
    sum = this.state1 + (words[3] as number) + (sum >= TWO_32 ? 1 : 0);
    this.state1 = sum >>> 0;
    sum = this.state2 + (words[0] as number) + (sum >= TWO_32 ? 1 : 0);
    this.state2 = sum >>> 0;
    this.state3 = (this.state3 + (words[1] as number) + (sum >= TWO_32 ? 1 : 0)) >>> 0;
    this.step();
  }

  /** The generator's whole state (state, increment, buffered half) written into `into`: ten numbers. */
  saveState(into: number[]): void {
    into[0] = this.state0;
    into[1] = this.state1;
    into[2] = this.state2;
    into[3] = this.state3;
    into[4] = this.increment0;
    into[5] = this.increment1;
    into[6] = this.increment2;
    into[7] = this.increment3;
    into[8] = this.hasBuffered ? 1 : 0;
    into[9] = this.buffered;
  }

  /** Puts back a state `saveState` wrote: the draws that follow are the ones that followed then. */
  restoreState(from: readonly number[]): void {
    this.state0 = from[0] as number;
    this.state1 = from[1] as number;
    this.state2 = from[2] as number;
    this.state3 = from[3] as number;
    this.increment0 = from[4] as number;
    this.increment1 = from[5] as number;
    this.increment2 = from[6] as number;
    this.increment3 = from[7] as number;
    this.hasBuffered = from[8] === 1;
    this.buffered = from[9] as number;
  }

  /**
   * state = state · MULTIPLIER + increment (mod 2^128). Word k of the product sums the low halves of the
   * products of words i + j = k and the high halves of those with i + j = k − 1; each sum stays below
   * 2^36, exact in a float, and `>>> 0` takes it modulo 2^32.
   */
  private step(): void {
    // The PCG64 multiplier 0x2360ED051FC65DA44385DF649FCCF645 as 32-bit words, least significant first.
    // Local constants: V8 folds these into the code, where module-level ones are loaded and checked on
    // every step (about 13% of the generator's instructions).
    const MULTIPLIER_0 = 0x9fccf645;
    const MULTIPLIER_1 = 0x4385df64;
    const MULTIPLIER_2 = 0x1fc65da4;
    const MULTIPLIER_3 = 0x2360ed05;
    const TWO_32 = 4294967296;
    const s0 = this.state0;
    const s1 = this.state1;
    const s2 = this.state2;
    const s3 = this.state3;
    const low00 = Math.imul(s0, MULTIPLIER_0) >>> 0;
    const low01 = Math.imul(s0, MULTIPLIER_1) >>> 0;
    const low10 = Math.imul(s1, MULTIPLIER_0) >>> 0;
    const low02 = Math.imul(s0, MULTIPLIER_2) >>> 0;
    const low11 = Math.imul(s1, MULTIPLIER_1) >>> 0;
    const low20 = Math.imul(s2, MULTIPLIER_0) >>> 0;
    let sum = low00 + this.increment0;
    this.state0 = sum >>> 0;
    sum = productHigh(s0, MULTIPLIER_0, low00) + low01 + low10 + this.increment1 + (sum >= TWO_32 ? 1 : 0);
    this.state1 = sum >>> 0;
    sum = productHigh(s0, MULTIPLIER_1, low01) + productHigh(s1, MULTIPLIER_0, low10) + low02 + low11 + low20 + this.increment2 + Math.floor(sum / TWO_32);
    this.state2 = sum >>> 0;
    // Only the low 32 bits of the top word are kept, so its products need no high halves.
    sum =
      productHigh(s0, MULTIPLIER_2, low02) +
      productHigh(s1, MULTIPLIER_1, low11) +
      productHigh(s2, MULTIPLIER_0, low20) +
      Math.imul(s0, MULTIPLIER_3) +
      Math.imul(s1, MULTIPLIER_2) +
      Math.imul(s2, MULTIPLIER_1) +
      Math.imul(s3, MULTIPLIER_0) +
      this.increment3 +
      Math.floor(sum / TWO_32);
    this.state3 = sum >>> 0;
  }

  /** One 64-bit XSL-RR output as [low32, high32]; the low half is returned, the high half buffered. */
  nextUint32(): number {
    if (this.hasBuffered) {
      this.hasBuffered = false;
      return this.buffered;
    }
    this.step();
    // XSL-RR: the two 64-bit halves xor-ed, rotated right by the state's top 6 bits.
    let low = (this.state0 ^ this.state2) >>> 0;
    let high = (this.state1 ^ this.state3) >>> 0;
    let rotation = this.state3 >>> 26;
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
