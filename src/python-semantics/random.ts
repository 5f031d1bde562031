/**
 * Python's `random` module where ported benchmarks depend on its exact stream: the Mersenne Twister
 * (MT19937) as CPython seeds it from an int (`init_by_array` over the 32-bit words of |n|), with
 * `random()`, `getrandbits(k)` and `randint(a, b)` drawing exactly as CPython does.
 */
const N = 624;
const M = 397;

export class PythonRandom {
  private readonly state = new Uint32Array(N);
  private index = N + 1;

  constructor(seed: number | bigint) {
    this.seed(seed);
  }

  /** `random.seed(n)` for an int n (negative seeds use |n|, as CPython does). */
  seed(seed: number | bigint): void {
    if (typeof seed === "number" && !Number.isSafeInteger(seed)) throw new RangeError(`random.seed needs an integer, got ${seed}`);
    let rest = BigInt(seed);
    if (rest < 0n) rest = -rest;
    const key: number[] = [];
    while (rest > 0n) {
      key.push(Number(rest & 0xffffffffn));
      rest >>= 32n;
    }
    if (key.length === 0) key.push(0);
    this.initByArray(key);
  }

  private initGenrand(seed: number): void {
    const mt = this.state;
    mt[0] = seed >>> 0;
    for (let i = 1; i < N; i++) {
      const previous = (mt[i - 1] as number) ^ ((mt[i - 1] as number) >>> 30);
      mt[i] = (Math.imul(1812433253, previous) + i) >>> 0;
    }
    this.index = N;
  }

  private initByArray(key: readonly number[]): void {
    const mt = this.state;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const previous = (mt[i - 1] as number) ^ ((mt[i - 1] as number) >>> 30);
      mt[i] = (((mt[i] as number) ^ Math.imul(previous, 1664525)) + (key[j] as number) + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1] as number;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const previous = (mt[i - 1] as number) ^ ((mt[i - 1] as number) >>> 30);
      mt[i] = (((mt[i] as number) ^ Math.imul(previous, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1] as number;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
    this.index = N;
  }

  private twist(): void {
    const mt = this.state;
    for (let k = 0; k < N; k++) {
      const y = ((mt[k] as number) & 0x80000000) | ((mt[(k + 1) % N] as number) & 0x7fffffff);
      mt[k] = ((mt[(k + M) % N] as number) ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)) >>> 0;
    }
    this.index = 0;
  }

  /** One 32-bit output (CPython's `genrand_uint32`). */
  uint32(): number {
    if (this.index >= N) this.twist();
    let y = this.state[this.index++] as number;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random.random()`: 53 random bits from two outputs. */
  random(): number {
    const high = this.uint32() >>> 5;
    const low = this.uint32() >>> 6;
    return (high * 67108864 + low) / 9007199254740992;
  }

  /** `random.getrandbits(k)` for 0 < k ≤ 32 (the widths a randint up to 2^32 needs). */
  getrandbits(bits: number): number {
    if (!Number.isInteger(bits) || bits <= 0 || bits > 32) throw new RangeError(`getrandbits supports 1..32 bits here, got ${bits}`);
    return this.uint32() >>> (32 - bits);
  }

  /** `random.randint(low, high)`: `randrange(low, high + 1)` by rejection sampling on bit_length bits. */
  randint(low: number, high: number): number {
    const width = high - low + 1;
    if (!Number.isSafeInteger(width) || width <= 0) throw new RangeError(`empty range for randint(${low}, ${high})`);
    if (width > 2 ** 32) throw new RangeError("randint ranges wider than 2^32 are not supported here");
    const bits = width.toString(2).length;
    let drawn = this.getrandbits(bits);
    while (drawn >= width) drawn = this.getrandbits(bits);
    return low + drawn;
  }
}
