/**
 * Runs the fault-injecting server as its own process (benchmarks keep its CPU out of the harness's):
 *   node --import tsx src/testing/serve-fault-server.ts [--latency MS] [--fault-rate P] [--seed S]
 * Prints the base URL on the first stdout line; plays the `mock` environment's oracle.
 */
import { mockOracleResponder, startFaultServer } from "./fault-server.ts";

function option(name: string, fallback: number): number {
  const position = process.argv.indexOf(name);
  return position === -1 ? fallback : Number(process.argv[position + 1]);
}

const server = await startFaultServer({
  respond: mockOracleResponder,
  latencyMs: option("--latency", 0),
  faultRate: option("--fault-rate", 0),
  seed: option("--seed", 0),
});
process.stdout.write(`${server.url}\n`);
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
