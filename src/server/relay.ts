import type { Socket } from "node:net";
import { Duplex } from "node:stream";

/** The in-memory connection a relayed request reaches node:http through; what node:http writes goes to the socket. */
export class Relay extends Duplex {
  /** The response to the request in flight has been written. */
  onResponseDone: () => void = () => undefined;
  detached = false;

  constructor(private readonly socket: Socket) {
    super();
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.socket.write(chunk, callback);
  }

  override _final(callback: () => void): void {
    this.socket.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // node:http destroys its connection after a response it cannot follow (a parse error): flush, then close.
    if (!this.detached) this.socket.destroySoon();
    callback(error);
  }
}
