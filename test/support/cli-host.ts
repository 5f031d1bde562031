/**
 * A long-lived `toolgym` for test/docs-commands.test.ts: `node --import tsx test/support/cli-host.ts SOCKET`
 * listens on a Unix socket and runs each command it is sent with the CLI's own `main()`, one at a time, in
 * the directory the command was typed in. Starting node and loading the CLI through tsx costs about 2 s of CPU
 * a command (npx included), most of what running the docs' 60-odd commands cost; here it is paid once. No
 * toolgym command reads stdin, so none is forwarded.
 *
 * Protocol (test/support/cli-host-client.mjs speaks it): the client sends one JSON line `{cwd, argv, env}`; the host
 * answers JSON lines `{fd: 1 | 2, text}` as the command writes, then `{code}` and closes.
 */
import { createServer, type Socket } from "node:net";
import { main } from "../../src/cli/main.ts";

const socketPath = process.argv[2];
if (!socketPath) throw new Error("usage: cli-host.ts SOCKET");

/** Commands run one after another: each changes the process's working directory to its own. */
let queue: Promise<void> = Promise.resolve();

interface Request {
  cwd: string;
  argv: string[];
  env: Record<string, string>;
}

/** Makes `process.env` the command's own environment (a variable set on the command line must reach it). */
function useEnvironment(env: Record<string, string>): void {
  for (const name of Object.keys(process.env)) if (!(name in env)) delete process.env[name];
  Object.assign(process.env, env);
}

async function run(connection: Socket, request: Request): Promise<void> {
  const send = (message: object) => connection.write(`${JSON.stringify(message)}\n`);
  const stream = (fd: 1 | 2) => ({ write: (text: string) => send({ fd, text }) });
  let code: number;
  try {
    process.chdir(request.cwd);
    useEnvironment(request.env);
    // No Ctrl-C reaches a command here: the signal it may ask for never fires.
    code = await main(request.argv, { stdout: stream(1), stderr: stream(2), interrupts: () => new AbortController().signal });
  } catch (error) {
    // main() reports every error as one line itself; anything escaping it is the host's failure, shown whole.
    send({ fd: 2, text: `cli-host: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n` });
    code = 1;
  }
  connection.end(`${JSON.stringify({ code })}\n`);
}

const server = createServer((connection) => {
  connection.setEncoding("utf8");
  let buffer = "";
  connection.on("data", (chunk: string) => {
    buffer += chunk;
    const end = buffer.indexOf("\n");
    if (end < 0) return;
    const request = JSON.parse(buffer.slice(0, end)) as Request;
    buffer = "";
    queue = queue.then(() => run(connection, request));
  });
  connection.on("error", () => undefined); // a client that went away has nobody to report to
});
server.listen(socketPath, () => process.stdout.write("ready\n"));
// The test ends the host by closing its stdin, so no host outlives a test that failed half-way.
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
