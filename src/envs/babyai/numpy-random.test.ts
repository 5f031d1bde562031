import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { NumpyGenerator, entropyWords, seedSequenceState } from "./numpy-random.ts";

const FIXTURE = fileURLToPath(new URL("../../../test/fixtures/babyai/numpy_pcg64_integers.json", import.meta.url));
const cases = JSON.parse(readFileSync(FIXTURE, "utf8")) as Array<{ seed: number; calls: Array<[number, number]>; results: number[] }>;

describe("numpy Generator(PCG64(SeedSequence(seed))).integers port", () => {
  for (const { seed, calls, results } of cases) {
    it(`reproduces numpy's ${calls.length} integers() results for seed ${seed}`, () => {
      const generator = new NumpyGenerator(seed);
      assert.deepEqual(
        calls.map(([low, high]) => generator.integers(low, high)),
        results,
      );
    });
  }

  it("consumes no randomness for one-value ranges", () => {
    const plain = new NumpyGenerator(42);
    const interleaved = new NumpyGenerator(42);
    const expected = [plain.integers(0, 100), plain.integers(0, 100), plain.integers(0, 100)];
    const got: number[] = [];
    for (let i = 0; i < 3; i++) {
      assert.equal(interleaved.integers(5, 6), 5);
      got.push(interleaved.integers(0, 100));
      assert.equal(interleaved.element(["only"]), "only");
    }
    assert.deepEqual(got, expected);
  });

  it("splits seeds into little-endian 32-bit entropy words", () => {
    assert.deepEqual(entropyWords(0), [0]);
    assert.deepEqual(entropyWords(0xdeadbeef), [0xdeadbeef]);
    assert.deepEqual(entropyWords(2n ** 32n + 7n), [7, 1]);
    assert.deepEqual(entropyWords(5 + 3 * 2 ** 32), [5, 3]);
    assert.throws(() => entropyWords(-1), RangeError);
  });

  it("gives distinct streams for distinct entropy word lists", () => {
    const a = seedSequenceState([1], 8).join(",");
    const b = seedSequenceState([1, 0], 8).join(",");
    const c = seedSequenceState([1, 1], 8).join(",");
    assert.notEqual(a, c);
    assert.notEqual(b, c);
  });
});
