// `toolgym ARGS` through the long-lived CLI host (test/support/cli-host.ts) at $TOOLGYM_CLI_HOST: prints what the
// command printed, on the same streams, and exits with its code. Plain JavaScript, so starting it costs only node.
import { connect } from "node:net";

const connection = connect(process.env.TOOLGYM_CLI_HOST);
connection.setEncoding("utf8");
connection.write(`${JSON.stringify({ cwd: process.cwd(), argv: process.argv.slice(2), env: process.env })}\n`);
let buffer = "";
let code;
connection.on("data", (chunk) => {
  buffer += chunk;
  for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
    const message = JSON.parse(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
    if ("code" in message) code = message.code;
    else (message.fd === 1 ? process.stdout : process.stderr).write(message.text);
  }
});
connection.on("error", (error) => {
  process.stderr.write(`cli-host-client: ${error.message}\n`);
  process.exitCode = 1;
});
// No exit code means the host died mid-command: a failure, never a silent success.
connection.on("close", () => (process.exitCode = code ?? 1));
