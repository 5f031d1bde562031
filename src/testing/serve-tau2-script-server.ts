/**
 * Runs the tau2 script server as its own process, for tau2's Python runner (test/fixtures/tau2/runner):
 *   node --import tsx src/testing/serve-tau2-script-server.ts SCENARIOS.json REQUESTS_OUT.json
 * Prints the base URL on the first stdout line; on SIGTERM writes every logged request to REQUESTS_OUT.json.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { startTau2ScriptServer, type ScriptScenario } from "./tau2-script-server.ts";

const [scenariosPath, requestsPath] = process.argv.slice(2);
if (!scenariosPath || !requestsPath) {
  process.stderr.write("usage: serve-tau2-script-server.ts SCENARIOS.json REQUESTS_OUT.json\n");
  process.exit(2);
}
const scenarios = (JSON.parse(readFileSync(scenariosPath, "utf8")) as { scenarios: ScriptScenario[] }).scenarios;
const server = await startTau2ScriptServer(scenarios);
process.stdout.write(`${server.url}\n`);
process.on(
  "SIGTERM",
  () =>
    void server.close().then(() => {
      writeFileSync(requestsPath, `${JSON.stringify(server.requests)}\n`);
      process.exit(0);
    }),
);
