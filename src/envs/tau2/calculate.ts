import { PythonError, pythonFloatRepr, pythonRound } from "../../python-semantics/index.ts";

/**
 * tau2's `calculate` tool: `str(round(float(eval(expression)), 2))` over digits, `+ - * / ( ) .` and
 * spaces. Evaluated here by a small parser with Python's int/float rules (`/` is true division, `//`
 * floors, `**` binds tighter than a unary minus on its left), never by JavaScript's eval.
 */
interface PyNumber {
  value: number;
  isFloat: boolean;
}

const SYNTAX = "invalid syntax (<string>, line 1)";

export function calculate(expression: unknown): string {
  if (typeof expression !== "string") throw new PythonError("TypeError", `'${typeof expression === "number" ? "int" : "NoneType"}' object is not iterable`);
  for (const char of expression) {
    if (!"0123456789+-*/(). ".includes(char)) throw new PythonError("ValueError", "Invalid characters in expression");
  }
  const parser = new Parser(expression);
  const result = parser.parse();
  return pythonFloatRepr(pythonRound(result.value, 2));
}

class Parser {
  private position = 0;
  constructor(private readonly text: string) {}

  parse(): PyNumber {
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

  private expression(): PyNumber {
    let left = this.term();
    for (;;) {
      if (this.peek("+")) {
        this.position += 1;
        const right = this.term();
        left = { value: left.value + right.value, isFloat: left.isFloat || right.isFloat };
      } else if (this.peek("-")) {
        this.position += 1;
        const right = this.term();
        left = { value: left.value - right.value, isFloat: left.isFloat || right.isFloat };
      } else return left;
    }
  }

  private term(): PyNumber {
    let left = this.unary();
    for (;;) {
      if (this.peek("**")) return left;
      if (this.peek("//")) {
        this.position += 2;
        const right = this.unary();
        const isFloat = left.isFloat || right.isFloat;
        if (right.value === 0) throw new PythonError("ZeroDivisionError", isFloat ? "float floor division by zero" : "integer division or modulo by zero");
        left = { value: Math.floor(left.value / right.value), isFloat };
      } else if (this.peek("/")) {
        this.position += 1;
        const right = this.unary();
        if (right.value === 0) throw new PythonError("ZeroDivisionError", left.isFloat || right.isFloat ? "float division by zero" : "division by zero");
        left = { value: left.value / right.value, isFloat: true };
      } else if (this.peek("*")) {
        this.position += 1;
        const right = this.unary();
        left = { value: left.value * right.value, isFloat: left.isFloat || right.isFloat };
      } else return left;
    }
  }

  private unary(): PyNumber {
    if (this.peek("-")) {
      this.position += 1;
      const operand = this.unary();
      return { value: -operand.value, isFloat: operand.isFloat };
    }
    if (this.peek("+")) {
      this.position += 1;
      return this.unary();
    }
    return this.power();
  }

  private power(): PyNumber {
    const base = this.atom();
    if (!this.peek("**")) return base;
    this.position += 2;
    const exponent = this.unary();
    const isFloat = base.isFloat || exponent.isFloat || exponent.value < 0;
    if (base.value === 0 && exponent.value < 0) throw new PythonError("ZeroDivisionError", "0.0 cannot be raised to a negative power");
    return { value: base.value ** exponent.value, isFloat };
  }

  private atom(): PyNumber {
    this.skipSpaces();
    if (this.text[this.position] === "(") {
      this.position += 1;
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
    const isFloat = literal.includes(".");
    if (!isFloat && literal.length > 1 && literal.startsWith("0") && /[1-9]/.test(literal)) {
      throw new PythonError(
        "SyntaxError",
        "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<string>, line 1)",
      );
    }
    return { value: Number(literal), isFloat };
  }
}
