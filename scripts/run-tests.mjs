// `npm test`: installs what the tests need when it is missing (the Python venv, Debian chromium), type-checks
// while it builds the tiny models several tests share (test/support/prepare.ts),
// then runs every *.test.ts under src/ and test/ with node's test runner. The run fails when any test fails,
// is skipped or todo, or prints to stdout (scripts/test-guard-reporter.mjs).
//
// `npm run test:unit`: the fast tier for development: no setup, no type check, and no test that needs
// Python or Chromium. Either form takes substrings of test paths to run a subset: `npm test -- babyai`.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
process.chdir(root);

const args = process.argv.slice(2);
const unitOnly = args.includes("--unit");
const filter = args.filter((arg) => arg !== "--unit");

/** Runs a command with inherited output; exits with its status when it fails. */
function step(title, command, commandArgs, options = {}) {
  console.log(`== ${title}`);
  const result = spawnSync(command, commandArgs, { stdio: "inherit", ...options });
  if (result.status !== 0) {
    console.error(`${title} failed (${result.error?.message ?? `exit ${result.status}`})`);
    process.exit(result.status || 1);
  }
}

function onPath(name) {
  return spawnSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" }).status === 0;
}

function findTests(directory, found = []) {
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (name === "node_modules" || name.startsWith(".")) continue;
    if (statSync(path).isDirectory()) findTests(path, found);
    else if (name.endsWith(".test.ts")) found.push(path);
  }
  return found;
}

/** A test file needs the integration setup when it asks for the venv's Python or a browser page. */
function needsIntegrations(file) {
  return /\brequirePython\(|\bwithWatchedPage\(|\brequireChromium\(/.test(readFileSync(file, "utf8"));
}

/**
 * The longest files, longest first (seconds on a quiet 2-core machine, issue 31). node's runner starts files in
 * the order given as its two slots free up, so a long file started last would run on alone at the end; started
 * first, it runs beside all the short ones.
 */
const LONGEST_FIRST = [
  // seconds in a full `npm test` on 2 loaded cores (2026-12-03)
  "test/pipeline-smoke.test.ts", // 308
  "test/trl-tau2-grpo.test.ts", // 106
  "test/docs-commands.test.ts", // 88
  "test/pipeline-tiny-vocabulary.test.ts", // 81
  "test/server-train-grpo-child.test.ts", // 79
  "test/pipeline-tau2-smoke.test.ts", // 71
  "test/server-fuzz.test.ts", // 62 (time-bounded properties, then the heap check)
  "test/eval-transformers-serve.test.ts", // 58
  "test/trl-grpo-e2e.test.ts", // 48
  "test/tiny-induction.test.ts", // 46
];

/** Known long files first, then the other files that start Python or a browser, then the rest; each by name. */
function scheduleRank(file) {
  const known = LONGEST_FIRST.indexOf(file);
  if (known >= 0) return known;
  return LONGEST_FIRST.length + (needsIntegrations(file) ? 0 : 1);
}

const files = [...findTests("src"), ...findTests("test")]
  .filter((file) => filter.length === 0 || filter.some((part) => file.includes(part)))
  .filter((file) => !unitOnly || !needsIntegrations(file))
  .sort()
  .sort((a, b) => scheduleRank(a) - scheduleRank(b));
if (files.length === 0) {
  console.error(`no test file matches ${filter.join(", ")}`);
  process.exit(1);
}

if (!unitOnly) {
  // Both steps are idempotent and quick when everything is already installed.
  step("python venv (scripts/setup-python.sh)", "bash", ["scripts/setup-python.sh"]);
  if (!onPath("chromium")) {
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    step("apt-get update (for chromium)", "apt-get", ["update", "-qq"], { env });
    step("apt-get install chromium", "apt-get", ["install", "-y", "-qq", "chromium"], { env });
  }
  // The tiny models several test files share are built once, on the core the type check leaves idle.
  const shared = files.some((file) => /\btinyQwen3Dir\(/.test(readFileSync(file, "utf8")));
  const preparing = shared ? spawn(process.execPath, ["--import", "tsx", "test/support/prepare.ts"], { stdio: "inherit" }) : undefined;
  const prepared = preparing && new Promise((done) => preparing.once("close", (code) => done(code)));
  if (preparing) console.log("== shared test models (test/support/prepare.ts), beside the type check");
  step("type check", "npx", ["tsc", "--noEmit", "-p", "tsconfig.json"]);
  if (prepared && (await prepared) !== 0) {
    console.error("shared test models failed (test/support/prepare.ts)");
    process.exit(1);
  }
}

const guardDirectory = mkdtempSync(join(tmpdir(), "toolgym-test-guard-"));
const guardFile = join(guardDirectory, "findings.tsv");
const durationsFile = join(guardDirectory, "durations.tsv");
console.log(`== ${files.length} test files${unitOnly ? " (unit tier: no Python or Chromium tests)" : ""}`);
const run = spawnSync(
  process.execPath,
  [
    "--import",
    "tsx",
    "--test",
    "--test-concurrency=2",
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=./scripts/test-guard-reporter.mjs",
    `--test-reporter-destination=${guardFile}`,
    "--test-reporter=./test/support/file-durations-reporter.mjs",
    `--test-reporter-destination=${durationsFile}`,
    ...files,
  ],
  { stdio: "inherit" },
);
const durations = (existsSync(durationsFile) ? readFileSync(durationsFile, "utf8") : "")
  .split("\n")
  .filter((entry) => entry.length > 0)
  .map((entry) => entry.split("\t"))
  .sort((a, b) => Number(b[0]) - Number(a[0]));
if (durations.length > 0) {
  console.log("\n== slowest test files (seconds; LONGEST_FIRST in scripts/run-tests.mjs starts the long ones first)");
  for (const [seconds, file] of durations.slice(0, 10)) console.log(`  ${seconds.padStart(6)}  ${file.replace(`${root}/`, "")}`);
}
// the file is missing only when the runner failed before starting its reporters (its status says why)
const findings = (existsSync(guardFile) ? readFileSync(guardFile, "utf8") : "")
  .split("\n")
  .filter((entry) => entry.length > 0)
  .map((entry) => entry.split("\t"));
rmSync(guardDirectory, { recursive: true, force: true });

const explain = {
  stdout: "printed to stdout (pass output streams to the code under test instead)",
  skip: "skipped a test (tests never skip: a missing dependency is a failure)",
  todo: "left a test as todo",
};
for (const kind of Object.keys(explain)) {
  const matching = findings.filter(([found]) => found === kind);
  if (matching.length === 0) continue;
  console.error(`\n${matching.length} finding(s): a test ${explain[kind]}:`);
  for (const [, file, detail] of matching.slice(0, 20)) console.error(`  ${file}: ${detail.slice(0, 200)}`);
}
if (run.status !== 0) process.exit(run.status ?? 1);
if (findings.length > 0) process.exit(1);
