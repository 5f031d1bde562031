import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { EnvConfigError, ProviderError, ToolgymError, createRandom, parseConfig, scoreComponents } from "./index.ts";

describe("core", () => {
  it("random streams are deterministic per key and differ between neighbouring keys", () => {
    const a = Array.from(
      { length: 5 },
      (
        (random) => () =>
          random.next()
      )(createRandom("x", 1, 2)),
    );
    const b = Array.from(
      { length: 5 },
      (
        (random) => () =>
          random.next()
      )(createRandom("x", 1, 2)),
    );
    const c = Array.from(
      { length: 5 },
      (
        (random) => () =>
          random.next()
      )(createRandom("x", 2, 1)),
    );
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    const random = createRandom("range");
    for (let i = 0; i < 1000; i++) {
      const value = random.integer(3, 7);
      assert.ok(value >= 3 && value <= 7 && Number.isInteger(value));
    }
  });

  it("parseConfig names the bad key on one line", () => {
    const schema = z.strictObject({ size: z.number().default(3) });
    assert.deepEqual(parseConfig("demo", schema, "{}"), { size: 3 });
    assert.throws(
      () => parseConfig("demo", schema, '{"sise": 4}'),
      (error: unknown) => error instanceof EnvConfigError && /'sise'/.test(error.message) && !error.message.includes("\n"),
    );
    assert.throws(
      () => parseConfig("demo", schema, '{"size": "big"}'),
      (error: unknown) => error instanceof EnvConfigError && /'size'/.test(error.message),
    );
    assert.throws(() => parseConfig("demo", schema, "{not json"), /not valid JSON/);
  });

  it("a failing or out-of-range reward component is null with an error record, never 0", () => {
    const { values, errors } = scoreComponents({
      good: () => 0.5,
      broken: () => {
        throw new Error("boom");
      },
      wild: () => 1.5,
    });
    assert.equal(values.good, 0.5);
    assert.equal(values.broken, null);
    assert.equal(values.wild, null);
    assert.equal(errors.length, 2);
    assert.match(errors[1]?.message ?? "", /outside \[0, 1\]/);
  });

  it("errors carry stable codes and are recognised by marker", () => {
    const error = new ProviderError({ message: "rate limited", status: 429, retryable: true });
    assert.ok(ToolgymError.isInstance(error));
    assert.equal(error.code, "PROVIDER_FAILED");
    assert.equal(error.toRecord().boundary, "provider");
    assert.ok(!ToolgymError.isInstance(new Error("plain")));
  });
});
