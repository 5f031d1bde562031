/**
 * Reads the head of an HTTP/1.1 request for http-connection.ts: just enough to frame it (where its body
 * ends) and to answer a tool call. It is strict on purpose: anything it is not sure node:http would read the
 * same way (another HTTP version, an odd character, a repeated or chunked framing header, an upgrade) comes
 * back as `undefined`, and node:http then reads the connection itself and gives its usual answer.
 */

/** Request line, then header lines: token names, values of visible characters, spaces, tabs or obs-text. */
const headPattern = /^(GET|POST|PUT|PATCH|DELETE) (\/[!-~]*) HTTP\/1\.1((?:\r\n[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t\x20-\x7e\x80-\xff]*)*)$/;
const digits = /^\d{1,15}$/;

export interface RequestHead {
  method: string;
  target: string;
  /** Bytes of head and blank line: where the body starts. */
  bodyStart: number;
  /** Bytes of head and body together. */
  total: number;
  /** `Connection: close` was sent. */
  close: boolean;
  /** Nothing about the request needs node:http itself (a `Host` header is there, `Connection` is plain). */
  plain: boolean;
  authorization: string | undefined;
}

/** Drops the spaces and tabs around a header value (what node:http drops; `trim()` would drop more). */
function trimSpaces(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** The value of header `key` (`"\r\n<name>:"`, lower case): null when absent, false when it is repeated. */
function header(headers: string, lower: string, key: string): string | null | false {
  const at = lower.indexOf(key);
  if (at < 0) return null;
  if (lower.includes(key, at + key.length)) return false;
  const start = at + key.length;
  const end = headers.indexOf("\r\n", start);
  return trimSpaces(headers.slice(start, end < 0 ? headers.length : end));
}

/**
 * The framing of a request head: `text` is the head up to, not including, its blank line, decoded as
 * latin1 (one character per byte). Undefined when node:http should read the request.
 */
export function parseRequestHead(text: string, maxBodyBytes: number): RequestHead | undefined {
  const match = headPattern.exec(text);
  if (!match) return undefined;
  const headers = match[3] as string;
  const lower = headers.toLowerCase(); // latin1 letters keep their length in lower case
  if (lower.includes("\r\ntransfer-encoding:") || lower.includes("\r\nupgrade:") || lower.includes("\r\nexpect:")) return undefined;
  const declared = header(headers, lower, "\r\ncontent-length:");
  const connection = header(headers, lower, "\r\nconnection:");
  const authorization = header(headers, lower, "\r\nauthorization:");
  if (declared === false || connection === false || authorization === false) return undefined;
  if (declared !== null && !digits.test(declared)) return undefined;
  const length = declared === null ? 0 : Number(declared);
  // node:http refuses it (413, `Connection: close`) without reading the body.
  if (length > maxBodyBytes) return undefined;
  const close = connection !== null && connection.toLowerCase() === "close";
  const plainConnection = connection === null || close || connection.toLowerCase() === "keep-alive";
  // node:http answers an HTTP/1.1 request without `Host` with 400.
  const plain = plainConnection && lower.includes("\r\nhost:");
  const bodyStart = text.length + 4;
  return {
    method: match[1] as string,
    target: match[2] as string,
    bodyStart,
    total: bodyStart + length,
    close,
    plain,
    authorization: authorization ?? undefined,
  };
}
