/**
 * `normalize_answer` of the official MuSiQue (`metrics/answer.py`) and 2WikiMultihopQA
 * (`2wikimultihop_evaluate_v1.1.py`) scorers, with Python 3 semantics reproduced in JavaScript:
 * lowercase → delete the 32 ASCII characters of `string.punctuation` → replace the articles a/an/the
 * (Python's Unicode-aware `\b`) by a space → `" ".join(s.split())` (Python's `str.isspace` set).
 */

/** Python `string.punctuation`: exactly these 32 ASCII characters, nothing else. */
const PUNCTUATION = new Set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");

/** Python's `\w` is `str.isalnum()` or `_`; JavaScript's `\b` is ASCII-only even with `/u`. */
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;

/** The characters Python's `str.split()` splits on (`str.isspace`), as runs. */
const PYTHON_WHITESPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;

/** Python `s.split()`: split on runs of whitespace, no empty strings. */
export function pythonSplit(text: string): string[] {
  return text.split(PYTHON_WHITESPACE).filter((part) => part !== "");
}

/** Deletes the 32 ASCII punctuation characters; Unicode punctuation (’ – “) is kept, as in Python. */
export function removePunctuation(text: string): string {
  let result = "";
  let start = 0;
  for (let position = 0; position < text.length; position++) {
    if (PUNCTUATION.has(text[position] as string)) {
      result += text.slice(start, position);
      start = position + 1;
    }
  }
  return start === 0 ? text : result + text.slice(start);
}

/** The official `normalize_answer` (identical for both datasets). */
export function normalizeAnswer(text: string): string {
  const withoutArticles = removePunctuation(text.toLowerCase()).replace(ARTICLES, " ");
  return pythonSplit(withoutArticles).join(" ");
}

/** Tokens of a normalized answer: `normalize_answer(s).split()`. */
export function answerTokens(text: string): string[] {
  const normalized = normalizeAnswer(text);
  return normalized === "" ? [] : normalized.split(" ");
}

/** `sum((Counter(a) & Counter(b)).values())`: the size of the multiset intersection. */
export function commonTokenCount(first: string[], second: string[]): number {
  const counts = new Map<string, number>();
  for (const token of first) counts.set(token, (counts.get(token) ?? 0) + 1);
  let common = 0;
  for (const token of second) {
    const count = counts.get(token);
    if (count) {
      common++;
      counts.set(token, count - 1);
    }
  }
  return common;
}
