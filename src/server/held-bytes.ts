/**
 * The bytes all connections together hold for requests not complete yet, under one cap: the socket reader's
 * buffered requests (http-connection.ts) and the bodies node:http reads (node-transport.ts: chunked ones,
 * which the reader hands over) count against the same budget, so neither transport is a way around it.
 */
export class HeldBytes {
  /** Bytes held now. */
  held = 0;

  constructor(readonly max: number = DEFAULT_MAX_HELD_BYTES) {}
}

export const DEFAULT_MAX_HELD_BYTES = 64 * 1024 * 1024;
