import { connect, type Socket } from "node:net";

/**
 * One keep-alive HTTP/1.1 connection driven straight on the socket, one request in flight, for load
 * generation. Why: node:http's client (an Agent, a ClientRequest and an IncomingMessage per call) costs the
 * generator more CPU per call than `toolgym serve` spends answering it, so with node:http on the other core
 * the generator, not the server, set the calls/s and the latency the server bench reported. For the same
 * reason each connection reads into one buffer shared by all (net.connect's `onread`) instead of through a
 * readable stream. Responses must carry Content-Length (every `toolgym serve` and uvicorn answer here
 * does); anything else is an error.
 */
const readBuffer = Buffer.alloc(64 * 1024);
const HEAD_END = Buffer.from("\r\n\r\n");

export class RawHttpConnection {
  /** Bytes of a response not complete yet (copied out of the shared read buffer). */
  private pending: Buffer | undefined;
  private waiting: { done: (reply: { status: number; text: string }) => void; fail: (error: Error) => void } | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly host: string,
  ) {
    socket.setNoDelay(true);
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
      const socket = connect({
        port,
        host,
        onread: {
          buffer: readBuffer,
          callback: (length, buffer) => {
            // Reads start after this function returns, so `connection` is set by then.
            connection.receive(Buffer.from(buffer.buffer, buffer.byteOffset, length));
            return true;
          },
        },
      });
      const connection = new RawHttpConnection(socket, `${host}:${port}`);
      socket.once("connect", () => resolve(connection));
      socket.once("error", reject);
    });
  }

  /** The bytes of `POST path` with a JSON body, built once and sent as often as wanted. */
  post(path: string, body: string): Buffer {
    return this.request("POST", path, body);
  }

  /** The bytes of a request with a JSON body (empty: none), built once and sent as often as wanted. */
  request(method: string, path: string, body = ""): Buffer {
    const payload = Buffer.from(body, "utf8");
    const type = body === "" ? "" : "Content-Type: application/json\r\n";
    const head = `${method} ${path} HTTP/1.1\r\nHost: ${this.host}\r\n${type}Content-Length: ${payload.length}\r\n\r\n`;
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

  private receive(bytes: Buffer): void {
    const data = this.pending ? Buffer.concat([this.pending, bytes]) : bytes;
    this.pending = undefined;
    const waiting = this.waiting;
    const end = data.indexOf(HEAD_END);
    const head = end < 0 ? "" : data.toString("latin1", 0, end);
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (waiting && end >= 0 && !length) {
      this.waiting = undefined;
      waiting.fail(new Error(`response without Content-Length: ${head.slice(0, 120)}`));
      return;
    }
    const total = end + 4 + Number(length?.[1]);
    if (!waiting || end < 0 || data.length < total) {
      // Kept for the next read, which reuses the shared buffer: a copy.
      this.pending = Buffer.from(data);
      return;
    }
    const text = data.toString("utf8", end + 4, total);
    if (data.length > total) this.pending = Buffer.from(data.subarray(total));
    this.waiting = undefined;
    waiting.done({ status: Number(head.slice(9, 12)), text });
  }
}
