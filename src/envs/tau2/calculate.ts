import { PythonError, pythonFloatRepr, pythonRound } from "../../python-semantics/index.ts";

/**
 * tau2's `calculate` tool: `str(round(float(eval(expression)), 2))` over digits, `+ - * / ( ) .` and
 * spaces. Evaluated here by a small parser with Python's rules, never by JavaScript's eval: ints are exact
 * (bigint), `/` is true division, `//` floors, `**` binds tighter than a unary minus on its left, `()` is
 * the empty tuple and `2(3)` a call of an int; float overflow and int-to-float conversion raise as Python does.
 */
type Value = { kind: "int"; value: bigint } | { kind: "float"; value: number } | { kind: "tuple" } | { kind: "complex" };

const SYNTAX = "invalid syntax (<string>, line 1)";
/** An int result bigger than this many bits is refused (Python would spend the memory; toolgym bounds it). */
const MAX_INT_BITS = 1_000_000;

const typeName = (value: Value): string => value.kind;

function toFloat(value: Value): number {
  if (value.kind === "float") return value.value;
  if (value.kind === "int") {
    const converted = Number(value.value);
    if (!Number.isFinite(converted)) throw new PythonError("OverflowError", "int too large to convert to float");
    return converted;
  }
  throw new PythonError("TypeError", `float() argument must be a string or a real number, not '${typeName(value)}'`);
}

function float(value: number): Value {
  return { kind: "float", value };
}

function unsupported(symbol: string, left: Value, right: Value): PythonError {
  return new PythonError("TypeError", `unsupported operand type(s) for ${symbol}: '${typeName(left)}' and '${typeName(right)}'`);
}

/** A tuple operand: concatenation and repetition by an int work, everything else is a TypeError. */
function tupleOperation(symbol: string, left: Value, right: Value): Value {
  if (symbol === "+" && left.kind === "tuple" && right.kind === "tuple") return left;
  if (symbol === "+" && left.kind === "tuple") throw new PythonError("TypeError", `can only concatenate tuple (not "${typeName(right)}") to tuple`);
  if (symbol === "*") {
    const other = left.kind === "tuple" ? right : left;
    if (other.kind === "int") return { kind: "tuple" };
    if (other.kind !== "tuple") throw new PythonError("TypeError", `can't multiply sequence by non-int of type '${typeName(other)}'`);
  }
  throw unsupported(symbol === "**" ? "** or pow()" : symbol, left, right);
}

/** int / int: the exact quotient rounded to a float (Python's true division), or OverflowError. */
function trueDivide(left: bigint, right: bigint): number {
  if (right === 0n) throw new PythonError("ZeroDivisionError", "division by zero");
  const small = Number(left) / Number(right);
  const big = (value: bigint) => (value < 0n ? -value : value) > 2n ** 1000n;
  if (!big(left) && !big(right)) return small;
  // Scale so the quotient keeps 64 significant bits, then undo the scale in floating point.
  const shift = BigInt(Math.max(0, 64 - (left.toString(2).length - right.toString(2).length)));
  const quotient = Number((left << shift) / right) / 2 ** Number(shift);
  if (!Number.isFinite(quotient)) throw new PythonError("OverflowError", "integer division result too large for a float");
  return quotient;
}

function binary(symbol: string, left: Value, right: Value): Value {
  if (left.kind === "tuple" || right.kind === "tuple") return tupleOperation(symbol, left, right);
  if (left.kind === "complex" || right.kind === "complex") return { kind: "complex" };
  if (left.kind === "int" && right.kind === "int") {
    const [a, b] = [left.value, right.value];
    if (symbol === "+") return { kind: "int", value: a + b };
    if (symbol === "-") return { kind: "int", value: a - b };
    if (symbol === "*") return { kind: "int", value: a * b };
    if (symbol === "/") return float(trueDivide(a, b));
    if (symbol === "//") {
      if (b === 0n) throw new PythonError("ZeroDivisionError", "integer division or modulo by zero");
      const quotient = a / b;
      return { kind: "int", value: a % b !== 0n && a < 0n !== b < 0n ? quotient - 1n : quotient };
    }
    if (b < 0n) return power(Number(a), Number(b));
    const bits = BigInt((a < 0n ? -a : a).toString(2).length) * b;
    if (bits > BigInt(MAX_INT_BITS)) throw new PythonError("MemoryError", "");
    return { kind: "int", value: a ** b };
  }
  const [a, b] = [toFloat(left), toFloat(right)];
  if (symbol === "+") return float(a + b);
  if (symbol === "-") return float(a - b);
  if (symbol === "*") return float(a * b);
  if (symbol === "/") {
    if (b === 0) throw new PythonError("ZeroDivisionError", "float division by zero");
    return float(a / b);
  }
  if (symbol === "//") {
    if (b === 0) throw new PythonError("ZeroDivisionError", "float floor division by zero");
    return float(Math.floor(a / b));
  }
  return power(a, b);
}

/** Python's float `**`: a finite overflow raises, a negative base with a fractional exponent gives a complex. */
function power(base: number, exponent: number): Value {
  if (base === 0 && exponent < 0) throw new PythonError("ZeroDivisionError", "0.0 cannot be raised to a negative power");
  if (base < 0 && Number.isFinite(exponent) && !Number.isInteger(exponent)) return { kind: "complex" };
  const result = base ** exponent;
  if (!Number.isFinite(result) && Number.isFinite(base) && Number.isFinite(exponent))
    throw new PythonError("OverflowError", "(34, 'Numerical result out of range')");
  return float(result);
}

export function calculate(expression: unknown): string {
  if (typeof expression !== "string") throw new PythonError("TypeError", `'${typeof expression === "number" ? "int" : "NoneType"}' object is not iterable`);
  for (const char of expression) {
    if (!"0123456789+-*/(). ".includes(char)) throw new PythonError("ValueError", "Invalid characters in expression");
  }
  // eval strips leading spaces; nothing left is a syntax error on "line 0".
  if (expression.trim() === "") throw new PythonError("SyntaxError", "invalid syntax (<string>, line 0)");
  const result = new Parser(expression).parse();
  return pythonFloatRepr(pythonRound(toFloat(result), 2));
}

class Parser {
  private position = 0;
  constructor(private readonly text: string) {}

  parse(): Value {
    const value = this.expression();
    this.skipSpaces();
    if (this.position < this.text.length) throw new PythonError("SyntaxError", SYNTAX);
    return value;
  }

  private skipSpaces(): void {
    while (this.text[this.position] === " ") this.position += 1;
  }

  private peek(operator: string): boolean {
    this.skipSpaces();
    return this.text.startsWith(operator, this.position);
  }

  private expression(): Value {
    let left = this.term();
    for (;;) {
      const symbol = this.peek("+") ? "+" : this.peek("-") ? "-" : null;
      if (!symbol) return left;
      this.position += 1;
      left = binary(symbol, left, this.term());
    }
  }

  private term(): Value {
    let left = this.unary();
    for (;;) {
      if (this.peek("**")) return left;
      const symbol = this.peek("//") ? "//" : this.peek("/") ? "/" : this.peek("*") ? "*" : null;
      if (!symbol) return left;
      this.position += symbol.length;
      left = binary(symbol, left, this.unary());
    }
  }

  private unary(): Value {
    const symbol = this.peek("-") ? "-" : this.peek("+") ? "+" : null;
    if (!symbol) return this.power();
    this.position += 1;
    const operand = this.unary();
    if (operand.kind === "tuple") throw new PythonError("TypeError", `bad operand type for unary ${symbol}: 'tuple'`);
    if (symbol === "+" || operand.kind === "complex") return operand;
    return operand.kind === "int" ? { kind: "int", value: -operand.value } : float(-operand.value);
  }

  private power(): Value {
    const base = this.call();
    if (!this.peek("**")) return base;
    this.position += 2;
    return binary("**", base, this.unary());
  }

  /** `atom(args)`: Python evaluates the argument, then calling a number raises. */
  private call(): Value {
    const callee = this.atom();
    if (!this.peek("(")) return callee;
    this.position += 1;
    if (!this.peek(")")) this.expression();
    if (!this.peek(")")) throw new PythonError("SyntaxError", "'(' was never closed (<string>, line 1)");
    throw new PythonError("TypeError", `'${typeName(callee)}' object is not callable`);
  }

  private atom(): Value {
    this.skipSpaces();
    if (this.text[this.position] === "(") {
      this.position += 1;
      if (this.peek(")")) {
        this.position += 1;
        return { kind: "tuple" };
      }
      const value = this.expression();
      if (!this.peek(")")) throw new PythonError("SyntaxError", "'(' was never closed (<string>, line 1)");
      this.position += 1;
      return value;
    }
    const match = /^(\d+\.?\d*|\.\d+)/.exec(this.text.slice(this.position));
    if (!match) throw new PythonError("SyntaxError", SYNTAX);
    const literal = match[0];
    this.position += literal.length;
    if (this.text[this.position] === ".") throw new PythonError("SyntaxError", SYNTAX);
    if (literal.includes(".")) return float(Number(literal));
    if (literal.length > 1 && literal.startsWith("0") && /[1-9]/.test(literal)) {
      throw new PythonError(
        "SyntaxError",
        "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<string>, line 1)",
      );
    }
    return { kind: "int", value: BigInt(literal) };
  }
}
