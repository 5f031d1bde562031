/**
 * JSON parsing that keeps Python's dict order. A JavaScript object lists integer-like keys ("6086499569")
 * first, in numeric order, whatever the file says; Python keeps file order, and tau2's tool output shows
 * it. Objects with such keys are therefore parsed into `Map`s; all others stay plain objects.
 */
export type Dict = Record<string, unknown> | Map<string, unknown>;

const INDEX_LIKE = /^(0|[1-9]\d*)$/;

export function parseOrderedJson(text: string): unknown {
  return new Parser(text).parse();
}

class Parser {
  private position = 0;
  constructor(private readonly text: string) {}

  parse(): unknown {
    const value = this.value();
    this.space();
    return value;
  }

  private space(): void {
    while (/\s/.test(this.text[this.position] ?? "")) this.position += 1;
  }

  private value(): unknown {
    this.space();
    const char = this.text[this.position];
    if (char === "{") return this.object();
    if (char === "[") return this.array();
    if (char === '"') return this.string();
    const match = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(this.text.slice(this.position, this.position + 64));
    if (!match) throw new SyntaxError(`bad JSON at ${this.position}`);
    this.position += match[0].length;
    return JSON.parse(match[0]);
  }

  private string(): string {
    const start = this.position;
    this.position += 1;
    while (this.text[this.position] !== '"') this.position += this.text[this.position] === "\\" ? 2 : 1;
    this.position += 1;
    return JSON.parse(this.text.slice(start, this.position)) as string;
  }

  private array(): unknown[] {
    this.position += 1;
    const items: unknown[] = [];
    this.space();
    if (this.text[this.position] === "]") {
      this.position += 1;
      return items;
    }
    for (;;) {
      items.push(this.value());
      this.space();
      const char = this.text[this.position++];
      if (char === "]") return items;
      if (char !== ",") throw new SyntaxError(`bad JSON array at ${this.position}`);
    }
  }

  private object(): Dict {
    this.position += 1;
    const entries: [string, unknown][] = [];
    this.space();
    if (this.text[this.position] === "}") {
      this.position += 1;
      return {};
    }
    for (;;) {
      this.space();
      const key = this.string();
      this.space();
      this.position += 1;
      entries.push([key, this.value()]);
      this.space();
      const char = this.text[this.position++];
      if (char === "}") break;
      if (char !== ",") throw new SyntaxError(`bad JSON object at ${this.position}`);
    }
    return entries.some(([key]) => INDEX_LIKE.test(key)) ? new Map(entries) : Object.fromEntries(entries);
  }
}

export function dictGet(dict: unknown, key: string): unknown {
  return dict instanceof Map ? dict.get(key) : (dict as Record<string, unknown>)[key];
}

export function dictHas(dict: unknown, key: string): boolean {
  return dict instanceof Map ? dict.has(key) : Object.hasOwn(dict as object, key);
}

export function dictEntries(dict: unknown): [string, unknown][] {
  if (dict === null || dict === undefined) return [];
  return dict instanceof Map ? [...dict.entries()] : Object.entries(dict as Record<string, unknown>);
}

export function dictValues(dict: unknown): unknown[] {
  return dictEntries(dict).map(([, value]) => value);
}

export function dictKeys(dict: unknown): string[] {
  return dictEntries(dict).map(([key]) => key);
}
