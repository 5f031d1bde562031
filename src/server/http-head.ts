/**
 * Reads the head of an HTTP/1.1 request for http-connection.ts: just enough to frame it (where its body
 * ends) and to answer a tool call. It is strict on purpose: anything it is not sure node:http would read the
 * same way (another HTTP version, an odd character, a repeated or chunked framing header, an upgrade) comes
 * back as `undefined`, and node:http then reads the connection itself and gives its usual answer.
 *
 * It reads the received bytes themselves, in one pass, and makes a string only of the `Authorization`
 * value: it runs for every tool call, and decoding the head to text, matching it with a regular
 * expression and searching it header by header cost several times more.
 */

export interface RequestHead {
  method: string;
  /** Where the request target lies in the bytes read: a string is made of it only when it changes (see http-connection.ts). */
  targetStart: number;
  targetEnd: number;
  /** Bytes of head and blank line: where the body starts. */
  bodyStart: number;
  /** Bytes of head and body together. */
  total: number;
  /** `Connection: close` was sent. */
  close: boolean;
  /** Nothing about the request needs node:http itself (a `Host` header is there, `Connection` is plain). */
  plain: boolean;
  authorization: string | undefined;
  /** Where the `Host` value lies (trimmed; -1 without one): compared as bytes with the last one accepted. */
  hostStart: number;
  hostEnd: number;
  /** The `Origin` header, when a browser sent one. */
  origin: string | undefined;
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const VERSION = " HTTP/1.1";

/** Byte classes: 1 a header-name (token) character, 2 a header-value character, 3 both. */
const classes = new Uint8Array(256);
for (const character of "!#$%&'*+.^_`|~-") classes[character.charCodeAt(0)] = 1;
for (let code = 0x30; code <= 0x39; code++) classes[code] = 1;
for (let code = 0x41; code <= 0x5a; code++) classes[code] = classes[code + 0x20] = 1;
classes[0x09] = 2;
for (let code = 0x20; code <= 0x7e; code++) classes[code]! |= 2;
for (let code = 0x80; code <= 0xff; code++) classes[code] = 2;

/** Header names this reader acts on. */
const enum Name {
  Other,
  Host,
  ContentLength,
  Connection,
  Authorization,
  Origin,
  /** A framing or protocol switch node:http must handle (`Transfer-Encoding`, `Upgrade`, `Expect`). */
  Refused,
}

/**
 * Whether `bytes[start, end)` is `lower` (lower-case letters and `-`) in any letter case. Only for names
 * and values already checked to hold no CR: `| 0x20` then maps nothing else onto a letter or `-`.
 */
function equalsLower(bytes: Uint8Array, start: number, end: number, lower: string): boolean {
  if (end - start !== lower.length) return false;
  for (let offset = 0; offset < lower.length; offset++) if ((bytes[start + offset]! | 0x20) !== lower.charCodeAt(offset)) return false;
  return true;
}

/** Whether `bytes` holds `text` (ASCII) at `start`, exactly. */
function holds(bytes: Uint8Array, start: number, text: string): boolean {
  for (let offset = 0; offset < text.length; offset++) if (bytes[start + offset] !== text.charCodeAt(offset)) return false;
  return true;
}

function nameOf(bytes: Uint8Array, start: number, end: number): Name {
  switch (end - start) {
    case 4:
      return equalsLower(bytes, start, end, "host") ? Name.Host : Name.Other;
    case 6:
      return equalsLower(bytes, start, end, "expect") ? Name.Refused : equalsLower(bytes, start, end, "origin") ? Name.Origin : Name.Other;
    case 7:
      return equalsLower(bytes, start, end, "upgrade") ? Name.Refused : Name.Other;
    case 10:
      return equalsLower(bytes, start, end, "connection") ? Name.Connection : Name.Other;
    case 13:
      return equalsLower(bytes, start, end, "authorization") ? Name.Authorization : Name.Other;
    case 14:
      return equalsLower(bytes, start, end, "content-length") ? Name.ContentLength : Name.Other;
    case 17:
      return equalsLower(bytes, start, end, "transfer-encoding") ? Name.Refused : Name.Other;
    default:
      return Name.Other;
  }
}

const isSpace = (code: number | undefined): boolean => code === 0x20 || code === 0x09;

/** Where the head's blank line starts: the first CR LF CR LF within `bytes[0, length)`, or -1. */
export function headEnd(bytes: Uint8Array, length: number): number {
  for (let index = 3; index < length; index++) {
    if (bytes[index] === 0x0a && bytes[index - 1] === 0x0d && bytes[index - 2] === 0x0a && bytes[index - 3] === 0x0d) return index - 3;
  }
  return -1;
}

/**
 * The framing of a request whose head is `bytes[0, end)` (`end` where its blank line starts, see
 * `headEnd`). Undefined when node:http should read the request.
 *
 * Accepted: `METHOD /target HTTP/1.1` (GET, POST, PUT, PATCH, DELETE; a target of visible characters),
 * then header lines `name:value` with a token name and a value of visible characters, spaces, tabs or
 * obs-text; no `Transfer-Encoding`, `Upgrade` or `Expect`; at most one `Content-Length` (1 to 15 digits
 * within spaces and tabs, at most `maxBodyBytes`), `Connection` and `Authorization`.
 */
export function parseRequestHead(bytes: Buffer, end: number, maxBodyBytes: number): RequestHead | undefined {
  let method: string | undefined;
  for (const candidate of METHODS) {
    if (holds(bytes, 0, candidate) && bytes[candidate.length] === 0x20) {
      method = candidate;
      break;
    }
  }
  if (method === undefined) return undefined;
  const targetStart = method.length + 1;
  if (bytes[targetStart] !== 0x2f) return undefined; // "/"
  let position = targetStart + 1;
  while (position < end && bytes[position]! >= 0x21 && bytes[position]! <= 0x7e) position++;
  const targetEnd = position;
  if (end - position < VERSION.length || !holds(bytes, position, VERSION)) return undefined;
  position += VERSION.length;

  let length = 0;
  let sawLength = false;
  let sawConnection = false;
  let close = false;
  let keepAlive = false;
  let authorization: string | undefined;
  let host = false;
  let hostStart = -1;
  let hostEnd = -1;
  let origin: string | undefined;
  // Each turn reads CR LF, a name, ":" and a value, up to the next CR LF or the end of the head.
  while (position < end) {
    if (bytes[position] !== 0x0d || bytes[position + 1] !== 0x0a) return undefined;
    const nameStart = position + 2;
    position = nameStart;
    while (position < end && (classes[bytes[position]!]! & 1) === 1) position++;
    if (position === nameStart || position === end || bytes[position] !== 0x3a) return undefined; // ":"
    const name = nameOf(bytes, nameStart, position);
    let valueStart = ++position;
    while (position < end && (classes[bytes[position]!]! & 2) === 2) position++;
    if (name === Name.Other) continue;
    if (name === Name.Refused) return undefined;
    // The value without the spaces and tabs around it (what node:http drops).
    let valueEnd = position;
    while (valueStart < valueEnd && isSpace(bytes[valueStart])) valueStart++;
    while (valueEnd > valueStart && isSpace(bytes[valueEnd - 1])) valueEnd--;
    if (name === Name.Host) {
      // Two Host headers are node:http's to refuse.
      if (host) return undefined;
      host = true;
      hostStart = valueStart;
      hostEnd = valueEnd;
      continue;
    }
    if (name === Name.Origin) {
      if (origin !== undefined) return undefined;
      origin = bytes.toString("latin1", valueStart, valueEnd);
      continue;
    }
    // A repeated framing or credential header is node:http's to judge.
    if (name === Name.ContentLength) {
      if (sawLength || valueEnd === valueStart || valueEnd - valueStart > 15) return undefined;
      sawLength = true;
      for (let index = valueStart; index < valueEnd; index++) {
        const digit = bytes[index]! - 0x30;
        if (digit < 0 || digit > 9) return undefined;
        length = length * 10 + digit;
      }
    } else if (name === Name.Connection) {
      if (sawConnection) return undefined;
      sawConnection = true;
      close = equalsLower(bytes, valueStart, valueEnd, "close");
      keepAlive = equalsLower(bytes, valueStart, valueEnd, "keep-alive");
    } else {
      if (authorization !== undefined) return undefined;
      authorization = bytes.toString("latin1", valueStart, valueEnd);
    }
  }
  // node:http refuses it (413, `Connection: close`) without reading the body.
  if (length > maxBodyBytes) return undefined;
  // node:http answers an HTTP/1.1 request without `Host` with 400.
  const plain = host && (!sawConnection || close || keepAlive);
  const bodyStart = end + 4;
  return { method, targetStart, targetEnd, bodyStart, total: bodyStart + length, close, plain, authorization, hostStart, hostEnd, origin };
}
