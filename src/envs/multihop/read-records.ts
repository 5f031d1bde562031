import { closeSync, openSync, readSync } from "node:fs";
import { DataError } from "../../core/index.ts";

/**
 * Synchronous streaming readers for the official file formats: JSON Lines (MuSiQue, id_aliases.json)
 * and one top-level JSON array (2WikiMultihopQA). The file is read in chunks; each record is parsed on
 * its own, so a malformed record is reported with its file and line (and column inside a one-line
 * array) and, in skip-bad mode, skipped without losing the rest.
 */
export interface RecordPosition {
  /** 1-based line of the record's first character. */
  line: number;
  /** 1-based column of the record's first character. */
  column: number;
  /** 0-based position of the record in the file (blank lines not counted). */
  ordinal: number;
}

/** Called per parsed record; throw a string-message Error to mark the record malformed. */
export type RecordHandler = (value: unknown, position: RecordPosition) => void;

export interface ReadOptions {
  file: string;
  /** Skip malformed records (reported through `onSkip`) instead of failing at the first one. */
  skipBad?: boolean;
  onSkip?: (problem: SkippedRecord) => void;
  /** How the reader's user fixes an unreadable file or a malformed record (default: the environment config keys). */
  fixes?: { unreadable?: string; malformed?: string };
  /** The file's bytes, already read (asynchronously, by a server): parsed instead of reading `file`. */
  bytes?: Buffer;
}

export interface SkippedRecord {
  line: number;
  column: number;
  message: string;
}

const CHUNK_BYTES = 1 << 20;

/** Runs a reader's steps to the end at once and returns what it returns (the synchronous readers). */
export function finish<Result>(steps: Generator<void, Result>): Result {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Runs a reader's steps to the end, letting the event loop run between them: a server parsing a client-named
 * data file (up to its size cap) keeps answering everyone else, a chunk's parse (milliseconds) at a time.
 */
export async function finishCooperatively<Result>(steps: Generator<void, Result>): Promise<Result> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** End of the last complete UTF-8 character in bytes[0, size) (a cut multi-byte character is left out). */
function completeUtf8End(bytes: Buffer, size: number): number {
  for (let back = 1; back <= 3 && back <= size; back++) {
    const byte = bytes[size - back] as number;
    if (byte < 0x80) return size;
    if (byte >= 0xc0) {
      const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      return needed > back ? size - back : size;
    }
  }
  return size;
}

function* readChunks(file: string, fix = "check the path or pass data_dir / file", bytes?: Buffer): Generator<string> {
  if (bytes) {
    const start = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
    for (let offset = start; offset < bytes.length;) {
      const end = offset + CHUNK_BYTES >= bytes.length ? bytes.length : offset + completeUtf8End(bytes.subarray(offset, offset + CHUNK_BYTES), CHUNK_BYTES);
      yield bytes.toString("utf8", offset, end);
      offset = end;
    }
    return;
  }
  let descriptor: number;
  try {
    descriptor = openSync(file, "r");
  } catch (error) {
    throw new DataError({
      code: "DATA_FILE_UNREADABLE",
      file,
      message: `cannot open (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); ${fix}`,
      cause: error,
    });
  }
  // Buffer#toString decodes UTF-8 about twice as fast as a streaming TextDecoder; a character cut by
  // the chunk boundary is carried over to the next chunk, and a leading byte-order mark is dropped.
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let carried = 0;
  let first = true;
  try {
    for (;;) {
      const size = carried + readSync(descriptor, buffer, carried, CHUNK_BYTES - carried, null);
      if (size === carried) break;
      const start = first && size >= 3 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
      first = false;
      const end = completeUtf8End(buffer, size);
      yield buffer.toString("utf8", start, end);
      carried = buffer.copy(buffer, 0, end, size);
    }
    if (carried > 0) yield buffer.toString("utf8", 0, carried);
  } finally {
    closeSync(descriptor);
  }
}

function handle(options: ReadOptions, position: RecordPosition, parse: () => unknown, onRecord: RecordHandler): void {
  let value: unknown;
  try {
    value = parse();
    onRecord(value, position);
  } catch (error) {
    const message = (error as Error).message.replace(/\s+/g, " ");
    const where = position.line;
    if (!options.skipBad) {
      const column = position.column > 1 ? `, column ${position.column}` : "";
      throw new DataError({
        code: "DATA_RECORD_MALFORMED",
        file: options.file,
        line: where,
        message: `malformed record #${position.ordinal + 1}${column}: ${message} (${options.fixes?.malformed ?? "fix the record, or pass skip_bad: true to skip malformed records"})`,
      });
    }
    options.onSkip?.({ line: where, column: position.column, message });
  }
}

/**
 * Longest line a JSON Lines file may have (characters): the official records are tens of kilobytes. Why a
 * bound: a file without newlines was decoded and joined whole before its first record failed (issue 36).
 */
export const MAX_LINE_CHARACTERS = 4 * 1024 * 1024;

function lineTooLong(file: string, line: number): DataError {
  return new DataError({
    code: "DATA_RECORD_TOO_LONG",
    file,
    line,
    message: `line longer than ${MAX_LINE_CHARACTERS} characters; a JSON Lines file has one record per line`,
  });
}

/** JSON Lines: one record per non-blank line (blank lines are skipped, as the official readers do). */
export function readJsonLines(options: ReadOptions, onRecord: RecordHandler): void {
  finish(jsonLinesSteps(options, onRecord));
}

/** `readJsonLines`, pausing after each chunk (about a mebibyte) of the file. */
export function* jsonLinesSteps(options: ReadOptions, onRecord: RecordHandler): Generator<void, void> {
  let line = 0;
  let ordinal = 0;
  const take = (text: string) => {
    line++;
    const trimmed = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (trimmed.trim() === "") return;
    handle(options, { line, column: 1, ordinal: ordinal++ }, () => JSON.parse(trimmed), onRecord);
  };
  // The pieces of a line not ended yet, joined once it ends: each chunk is searched once, so a file without
  // newlines is read in linear time (searching the growing line again per chunk took 18 s for 128 MB; issue 36).
  let pieces: string[] = [];
  let pendingLength = 0;
  for (const chunk of readChunks(options.file, options.fixes?.unreadable, options.bytes)) {
    let start = 0;
    let newline = chunk.indexOf("\n");
    while (newline !== -1) {
      const piece = chunk.slice(start, newline);
      take(pieces.length === 0 ? piece : pieces.join("") + piece);
      pieces = [];
      pendingLength = 0;
      start = newline + 1;
      newline = chunk.indexOf("\n", start);
    }
    if (start < chunk.length) {
      pieces.push(chunk.slice(start));
      pendingLength += chunk.length - start;
      if (pendingLength > MAX_LINE_CHARACTERS) throw lineTooLong(options.file, line + 1);
    }
    yield;
  }
  if (pieces.length > 0) take(pieces.join(""));
}

const QUOTE = 34;
const BACKSLASH = 92;
const NEWLINE = 10;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const COMMA = 44;

function isJsonSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9;
}

/** Number of backslashes immediately before `end`, not looking before `floor`. */
function backslashRun(text: string, floor: number, end: number): number {
  let position = end - 1;
  while (position >= floor && text.charCodeAt(position) === BACKSLASH) position--;
  return end - 1 - position;
}

/**
 * One top-level JSON array, element by element. Elements are delimited by bracket depth outside
 * strings (string contents are skipped with `indexOf`), so a malformed element is still cut out
 * cleanly and parsed on its own; a broken array structure is always fatal.
 */
export function readJsonArray(options: ReadOptions, onRecord: RecordHandler): void {
  finish(jsonArraySteps(options, onRecord));
}

/** `readJsonArray`, pausing after each chunk (about a mebibyte) of the file. */
export function* jsonArraySteps(options: ReadOptions, onRecord: RecordHandler): Generator<void, void> {
  type State = "before" | "expect_element" | "element" | "closed";
  let state = "before" as State;
  let line = 1;
  /** File offset (in UTF-16 units) just after the last newline seen outside strings. */
  let lineStart = 0;
  let chunkBase = 0;
  let depth = 0;
  let inString = false;
  /** The previous chunk ended inside a string on an unpaired backslash. */
  let escapePending = false;
  let parts: string[] = [];
  let ordinal = 0;
  let start: RecordPosition = { line: 1, column: 1, ordinal: 0 };
  let column = 0;
  const fatal = (message: string) =>
    new DataError({
      code: "DATA_FILE_MALFORMED",
      file: options.file,
      line,
      message: `column ${column}: ${message} (expected one JSON array of records, as in the official dev.json)`,
    });

  for (const chunk of readChunks(options.file, options.fixes?.unreadable, options.bytes)) {
    let partStart = 0;
    let offset = 0;
    const length = chunk.length;
    while (offset < length) {
      if (inString) {
        let floor = offset;
        if (escapePending) {
          escapePending = false;
          floor = offset = offset + 1;
          if (offset >= length) break;
        }
        let quote = chunk.indexOf('"', offset);
        while (quote !== -1 && backslashRun(chunk, floor, quote) % 2 === 1) quote = chunk.indexOf('"', quote + 1);
        if (quote === -1) {
          escapePending = backslashRun(chunk, floor, length) % 2 === 1;
          offset = length;
          break;
        }
        inString = false;
        offset = quote + 1;
        continue;
      }
      const code = chunk.charCodeAt(offset);
      if (code === NEWLINE) {
        line++;
        lineStart = chunkBase + offset + 1;
      }
      column = chunkBase + offset - lineStart + 1;
      if (state !== "element") {
        offset++;
        if (isJsonSpace(code)) continue;
        if (state === "before") {
          if (code !== OPEN_BRACKET) throw fatal(`found '${String.fromCharCode(code)}' where the array should start`);
          state = "expect_element";
          continue;
        }
        if (state === "closed") throw fatal(`unexpected '${String.fromCharCode(code)}' after the end of the array`);
        if (code === CLOSE_BRACKET && ordinal === 0) {
          state = "closed";
          continue;
        }
        offset--;
        state = "element";
        start = { line, column, ordinal: ordinal++ };
        partStart = offset;
        parts = [];
        depth = 0;
      }
      offset++;
      if (depth === 0 && (code === COMMA || code === CLOSE_BRACKET)) {
        parts.push(chunk.slice(partStart, offset - 1));
        const text = parts.join("");
        parts = [];
        handle(options, start, () => JSON.parse(text), onRecord);
        state = code === COMMA ? "expect_element" : "closed";
        continue;
      }
      if (code === QUOTE) inString = true;
      else if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++;
      else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) depth--;
    }
    if (state === "element") parts.push(chunk.slice(partStart));
    chunkBase += length;
    yield;
  }
  if (state !== "closed") throw fatal(state === "before" ? "the file is empty" : "the file ends inside the array (truncated file or unterminated string)");
}
