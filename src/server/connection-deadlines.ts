import type { Socket } from "node:net";
import { statusPrefix } from "./response-head.ts";

/** How long a request's head (then the whole request) may take to arrive, counted from its first byte. */
export const DEFAULT_HEAD_MILLISECONDS = 20_000;
export const DEFAULT_REQUEST_MILLISECONDS = 60_000;

/** What the sweep needs to know of one connection of the socket reader (http-connection.ts). */
export interface WatchedConnection {
  socket: Socket;
  /** When it last received bytes or finished an answer. */
  idleSince: number;
  /** An answer is in flight. */
  busy: boolean;
  /** The reader still has it (node:http times out the ones handed to it). */
  own: boolean;
  /** When the first byte of the request being received arrived. */
  requestSince: number;
  /** Which part of a request it is waiting for, if any. */
  waiting(): "head" | "body" | undefined;
  /** When it was accepted. */
  openedSince: number;
  /** It has sent a request head with an accepted token (or any head, on a server without tokens). */
  trusted: boolean;
}

export interface DeadlineOptions {
  keepAliveMilliseconds: number;
  headMilliseconds: number;
  requestMilliseconds: number;
  /** The headers after Content-Length of a closing answer (response-head.ts). */
  closing(): string;
}

/**
 * Closes connections idle longer than the keep-alive timeout, those that have not authenticated within the
 * head deadline of their opening, and answers 408 and closes those whose
 * request has not arrived within its deadline, however slowly its bytes trickle in (a deadline reset by
 * each byte lets a slow client hold a connection for ever). One timer for all instead of one per socket.
 * Returns the function that stops it.
 */
export function sweepDeadlines(open: ReadonlySet<WatchedConnection>, options: DeadlineOptions): () => void {
  const timeout = JSON.stringify({ error: { code: "REQUEST_TIMEOUT", message: "the request did not arrive in time; send each request whole" } });
  const sweep = setInterval(
    () => {
      const now = Date.now();
      const idleLimit = now - options.keepAliveMilliseconds;
      for (const state of open) {
        if (!state.own) continue;
        const waiting = state.waiting();
        const late = waiting !== undefined && now - state.requestSince > (waiting === "head" ? options.headMilliseconds : options.requestMilliseconds);
        if (late) {
          state.socket.end(`${statusPrefix(408)}${Buffer.byteLength(timeout)}${options.closing()}${timeout}`);
          state.socket.destroySoon();
        } else if (!state.busy && waiting === undefined && state.idleSince < idleLimit) state.socket.destroy();
        // A connection that has not shown a token within the head deadline of its opening goes (issue 36: 4,100
        // idle sockets without one locked every client out).
        else if (!state.trusted && !state.busy && waiting !== "body" && now - state.openedSince > options.headMilliseconds) state.socket.destroy();
      }
    },
    Math.min(1000, options.keepAliveMilliseconds),
  );
  sweep.unref();
  return () => clearInterval(sweep);
}
