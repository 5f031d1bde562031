import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  PythonFloat,
  PythonRandom,
  parsePythonJson,
  pythonEquals,
  pythonFloatRepr,
  pythonFormatFixed,
  pythonJsonDumps,
  pythonRound,
  pythonStr,
  pythonStrip,
} from "./index.ts";

/** Values printed by CPython (test/fixtures/python-semantics/make_expected.py wrote them). */
const expected = JSON.parse(readFileSync(join(import.meta.dirname, "../../test/fixtures/python-semantics/expected.json"), "utf8"));

describe("python-semantics against CPython", () => {
  it("random.seed(n) + randint reproduce CPython's Mersenne Twister stream", () => {
    for (const { seed, values } of expected.randint_0_1000000) {
      const random = new PythonRandom(seed);
      assert.deepEqual(
        values.map(() => random.randint(0, 1_000_000)),
        values,
        `seed ${seed}`,
      );
    }
    for (const { seed, low, high, values } of expected.randint_small) {
      const random = new PythonRandom(seed);
      assert.deepEqual(
        values.map(() => random.randint(low, high)),
        values,
        `seed ${seed} randint(${low}, ${high})`,
      );
    }
    for (const { seed, values } of expected.random) {
      const random = new PythonRandom(seed);
      assert.deepEqual(
        values.map(() => pythonFloatRepr(random.random())),
        values,
        `seed ${seed} random()`,
      );
    }
  });

  it("float repr and str, exponents included (1e-05, 1e+16, 1.5e+300)", () => {
    for (const { literal, repr } of expected.float_repr) assert.equal(pythonFloatRepr(Number(literal)), repr, literal);
  });

  it("round(x, n) ties to even on the exact binary value", () => {
    for (const { value, digits, result } of expected.round)
      assert.equal(pythonFloatRepr(pythonRound(Number(value), digits)), result, `round(${value}, ${digits})`);
  });

  it("json.dumps variants of one parsed value", () => {
    const value = parsePythonJson(expected.dumps_source);
    const dumps = expected.dumps;
    assert.equal(pythonJsonDumps(value, { ensureAscii: true }), dumps.default);
    assert.equal(pythonJsonDumps(value), dumps.ensure_ascii_false);
    assert.equal(pythonJsonDumps(value, { ensureAscii: true, sortKeys: true }), dumps.sort_keys);
    assert.equal(pythonJsonDumps(value, { ensureAscii: true, indent: 2 }), dumps.indent_2);
    assert.equal(pythonJsonDumps(value, { indent: 4 }), dumps.indent_4_ascii_false);
    assert.equal(pythonJsonDumps(value, { ensureAscii: true, separators: [",", ":"] }), dumps.compact);
    // Parsed as plain numbers, an integral float loses its type unless its key is declared a float field.
    const plain = parsePythonJson(expected.dumps_source, { plainNumbers: true });
    assert.notEqual(pythonJsonDumps(plain, { ensureAscii: true }), dumps.default);
    assert.equal(pythonJsonDumps({ price: 100, n: 100 }, { floatKeys: new Set(["price"]) }), '{"price": 100.0, "n": 100}');
  });

  it("== across int, float, bool and containers", () => {
    for (const { left, right, equal } of expected.equals) {
      assert.equal(pythonEquals(parsePythonJson(left), parsePythonJson(right)), equal, `${left} == ${right}`);
      assert.equal(pythonEquals(JSON.parse(left), JSON.parse(right)), equal, `${left} == ${right} (plain numbers)`);
    }
  });

  it("str() of JSON values, as f-strings print them", () => {
    for (const { json, str } of expected.str) assert.equal(pythonStr(parsePythonJson(json)), str, json);
  });

  it("json.loads keeps float lexemes, big integers and integer-key order, and rejects broken text", () => {
    const value = parsePythonJson('{"b": 100.0, "a": [1e-7, -0, 12345678901234567890], "m": {"10": 1, "2": 2}}');
    assert.ok((value as { b: unknown }).b instanceof PythonFloat);
    assert.equal(pythonJsonDumps(value), '{"b": 100.0, "a": [1e-07, 0, 12345678901234567890], "m": {"10": 1, "2": 2}}');
    // json.loads("[-Infinity, 1e400, -1e400, NaN]") is [-inf, inf, -inf, nan]; json.dumps writes them back so.
    assert.equal(pythonJsonDumps(parsePythonJson("[-Infinity, 1e400, -1e400, NaN]")), "[-Infinity, Infinity, -Infinity, NaN]");
    assert.throws(() => parsePythonJson('{"a": 1'), /expected/);
    assert.throws(() => parsePythonJson('{"a": 1} x'), /after the JSON value/);
  });

  it("format(x, '.2f') as f-strings print it: inf, nan, and every digit past 1e21", () => {
    // Python: f"{float('inf'):.2f}" == "inf", f"{2.0**70:.2f}" == "1180591620717411303424.00"
    assert.equal(pythonFormatFixed(Infinity, 2), "inf");
    assert.equal(pythonFormatFixed(-Infinity, 2), "-inf");
    assert.equal(pythonFormatFixed(Number.NaN, 2), "nan");
    assert.equal(pythonFormatFixed(2 ** 70, 2), "1180591620717411303424.00");
    assert.equal(pythonFormatFixed(2.675, 2), "2.67");
  });

  it("str.strip honours chars and Python's whitespace set", () => {
    assert.equal(pythonStrip("  \nSure\n", "left", "\n"), "  \nSure\n");
    assert.equal(pythonStrip("\n\nSure\n", "both", "\n"), "Sure");
    assert.equal(pythonStrip("\ufeff x \u00a0", "both"), "\ufeff x");
    assert.equal(pythonStrip("\u001c x", "left"), "x");
  });
});
