import { STATUS_CODES } from "node:http";

/**
 * The status line and headers the socket reader (http-connection.ts) writes before an answer's JSON, as
 * node:http writes them. Made once per status, and once a second for the `Date`, rather than per answer.
 */
let dateText: string | undefined;
/**
 * The `Date` header node:http sends: made once a second, and forgotten by a timer at the next second (as
 * node:http does), so an answer reads it without asking the clock.
 */
export function httpDate(): string {
  if (dateText === undefined) {
    const now = new Date();
    dateText = now.toUTCString();
    setTimeout(() => (dateText = undefined), 1000 - now.getMilliseconds()).unref();
  }
  return dateText;
}

/** An answer's status line and headers up to the Content-Length value, by status (a handful of statuses). */
const statusPrefixes = new Map<number, string>();
export function statusPrefix(status: number): string {
  let prefix = statusPrefixes.get(status);
  if (prefix === undefined) {
    prefix = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: `;
    statusPrefixes.set(status, prefix);
  }
  return prefix;
}

/** The headers after Content-Length, for a connection kept open (`keepingAlive`) or closed after the answer (`closing`). */
export function createHeadTails(keepAliveMilliseconds: number): { keepingAlive(): string; closing(): string } {
  const keepAlive = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveMilliseconds / 1000)}\r\n\r\n`;
  // Rebuilt when the Date changes (once a second) rather than per answer.
  let keepAliveDate = "";
  let keepAliveTail = "";
  return {
    keepingAlive() {
      const date = httpDate();
      if (date !== keepAliveDate) {
        keepAliveDate = date;
        keepAliveTail = `\r\nDate: ${date}\r\n${keepAlive}`;
      }
      return keepAliveTail;
    },
    closing: () => `\r\nDate: ${httpDate()}\r\nConnection: close\r\n\r\n`,
  };
}
