import { connect, type Socket } from "node:net";

/**
 * One keep-alive HTTP/1.1 connection driven straight on the socket, one request in flight, for load
 * generation. Why: node:http's client (an Agent, a ClientRequest and an IncomingMessage per call) costs the
 * generator more CPU per call than `toolgym serve` spends answering it, so with node:http on the other core
 * the generator, not the server, set the calls/s and the latency the server bench reported. Responses must
 * carry Content-Length (every `toolgym serve` and uvicorn answer here does); anything else is an error.
 */
export class RawHttpConnection {
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: { done: (reply: { status: number; text: string }) => void; fail: (error: Error) => void } | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly host: string,
  ) {
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => {
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
      this.deliver();
    });
    const closed = (error?: Error) => {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.fail(error ?? new Error("connection closed before the response"));
    };
    socket.on("error", closed);
    socket.on("close", () => closed());
  }

  static open(port: number, host = "127.0.0.1"): Promise<RawHttpConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host, () => resolve(new RawHttpConnection(socket, `${host}:${port}`)));
      socket.once("error", reject);
    });
  }

  /** The bytes of `POST path` with a JSON body, built once and sent as often as wanted. */
  post(path: string, body: string): Buffer {
    const payload = Buffer.from(body, "utf8");
    const head = `POST ${path} HTTP/1.1\r\nHost: ${this.host}\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`;
    return Buffer.concat([Buffer.from(head, "latin1"), payload]);
  }

  send(request: Buffer): Promise<{ status: number; text: string }> {
    if (this.waiting) return Promise.reject(new Error("a request is already in flight on this connection"));
    return new Promise((done, fail) => {
      this.waiting = { done, fail };
      this.socket.write(request);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private deliver(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    const end = this.buffered.indexOf("\r\n\r\n");
    if (end < 0) return;
    const head = this.buffered.toString("latin1", 0, end);
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!length) {
      this.waiting = undefined;
      waiting.fail(new Error(`response without Content-Length: ${head.slice(0, 120)}`));
      return;
    }
    const total = end + 4 + Number(length[1]);
    if (this.buffered.length < total) return;
    const text = this.buffered.toString("utf8", end + 4, total);
    this.buffered = this.buffered.subarray(total);
    this.waiting = undefined;
    waiting.done({ status: Number(head.slice(9, 12)), text });
  }
}
