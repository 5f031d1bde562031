// npm test: type-check everything, then run every *.test.ts under src/ and test/ with node's test runner.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function findTests(directory, found = []) {
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (name === "node_modules" || name.startsWith(".")) continue;
    if (statSync(path).isDirectory()) findTests(path, found);
    else if (name.endsWith(".test.ts")) found.push(path);
  }
  return found;
}

const typecheck = spawnSync("npx", ["tsc", "--noEmit", "-p", "tsconfig.json"], { stdio: "inherit" });
if (typecheck.status !== 0) {
  console.error("type check failed");
  process.exit(typecheck.status ?? 1);
}
const filter = process.argv.slice(2);
const files = [...findTests("src"), ...findTests("test")].filter((file) => filter.length === 0 || filter.some((part) => file.includes(part))).sort();
const result = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=2", "--test-reporter=spec", ...files], { stdio: "inherit" });
process.exit(result.status ?? 1);
